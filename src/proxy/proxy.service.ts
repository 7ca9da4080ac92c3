import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { GatewayError } from '../core/errors/gateway-error.js';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { GatewaySecretShapes } from '../core/auth/gateway-key-shape.js';
import { etagMatches } from '../core/http/etag.js';
import { parseQuery } from '../core/http/query-string.js';
import { SecretRedactor } from '../core/logging/secret-redactor.js';
import { UPSTREAM_METRICS, type UpstreamMetrics } from '../core/ports/metrics.port.js';
import { LINK_SIGNER, type LinkSigner } from './links/link-signer.js';
import { TRACING_STAGES, USAGE_STAGES, type TracingStages, type UsageStages } from './pipeline-extensions.js';
import { buildPipelines, type PipelineParts } from './pipeline.js';
import type { Handler, ProxyResponse, RouteDefinition } from './pipeline.types.js';
import { buildProxyRequest, compileRoute, type CompiledRoute, type ProxyCall } from './request-builder.js';
import type { RequestTrace } from '../core/tracing/trace-context.js';
import { withValidator } from './cache/validator.js';
import { ResponseCache } from './response-cache.service.js';
import { selectResponseFields, takeFieldSelection } from './response-fields.js';
import { UndiciTransport } from './transport/undici.transport.js';
import type { UpstreamDefinition } from './upstream-definition.js';
import { UpstreamLimitsService } from './upstream-limits.service.js';

export interface RegisteredUpstream {
  readonly def: UpstreamDefinition;
  readonly handler: Handler;
  readonly transport: UndiciTransport;
  /** Follows the upstream's signed links (streamed, with our credential). */
  readonly linkHandler: Handler;
  readonly linkRoute: RouteDefinition;
}

interface ForwardRoute extends CompiledRoute {
  readonly handler: Handler;
}

/** Who follows a signed link, for the upstream budget's fair queue (links need no gateway key). */
export const SIGNED_LINK_CONSUMER = 'signed-link';

/**
 * Holds one composed pipeline per upstream (built once, at registration) and forwards requests through it.
 * Upstream modules register their definition when they initialise.
 */
@Injectable()
export class ProxyService implements OnApplicationShutdown {
  private readonly logger = new Logger('Proxy');
  private readonly upstreams = new Map<string, RegisteredUpstream>();
  private readonly routes = new Map<RouteDefinition, ForwardRoute>();
  private readonly parts: PipelineParts;
  /** Gateway keys and tokens: never forwarded in any field. */
  private readonly gatewaySecrets: GatewaySecretShapes;

  constructor(
    private readonly redactor: SecretRedactor,
    @Inject(LINK_SIGNER) private readonly signer: LinkSigner,
    cache: ResponseCache,
    limits: UpstreamLimitsService,
    @Inject(UPSTREAM_METRICS) metrics: UpstreamMetrics,
    @Inject(USAGE_STAGES) usage: UsageStages,
    @Inject(TRACING_STAGES) tracing: TracingStages,
    @Inject(ATRIUM_CONFIG) config: AtriumConfig,
  ) {
    this.gatewaySecrets = new GatewaySecretShapes([config.operatorToken, config.metricsToken]);
    this.parts = { cache, limits, metrics, signer, usage, tracing, redact: (t) => redactor.redact(t) };
  }

  register(def: UpstreamDefinition): void {
    if (this.upstreams.has(def.name)) throw new Error(`upstream ${def.name} registered twice`);
    const transport = new UndiciTransport({ ...def.transport, upstream: def.name, title: def.title });
    const { handler, linkHandler } = buildPipelines(def, transport.handler, this.parts);
    for (const s of def.credentials.secrets()) this.redactor.register(s);
    // A bounded id for metrics and logs; the target itself is signed data, never a route.
    const linkRoute: RouteDefinition = {
      id: `${def.name}.signed_link`,
      method: 'GET',
      path: '/{signed link}',
      family: 'links',
      file: true,
    };
    this.upstreams.set(def.name, { def, handler, transport, linkHandler, linkRoute });
    for (const route of def.routes) this.routes.set(route, { ...compileRoute(def, route), handler });
  }

  /** The name of the upstream a registered route belongs to. */
  upstreamOf(route: RouteDefinition): string | undefined {
    return this.routes.get(route)?.def.name;
  }

  upstream(name: string): RegisteredUpstream | undefined {
    return this.upstreams.get(name);
  }

  all(): RegisteredUpstream[] {
    return [...this.upstreams.values()];
  }

  /** Runs a consumer's call of a route through its upstream's pipeline: the one application service. */
  async handle(call: ProxyCall): Promise<ProxyResponse> {
    const compiled = this.routes.get(call.route);
    if (!compiled) throw new GatewayError('INTERNAL', { message: 'Route is not registered.' });
    const req = buildProxyRequest(compiled, call, this.gatewaySecrets);
    const fields = takeFieldSelection(req);
    const res = await compiled.handler(req);
    if (!fields) return res;
    const selected = selectResponseFields(res, fields);
    // A selection is other bytes: a cached answer's validator is recomputed over them.
    return selected !== res && res.freshForSeconds !== undefined ? withValidator(selected) : selected;
  }

  /**
   * Follows a gateway-signed link (README "Key custody"): checks the signature and expiry (403 otherwise),
   * then GETs the signed target from the upstream with our credential and streams the answer.
   */
  async followLink(
    upstream: string,
    token: unknown,
    req: { readonly requestId: string; readonly accept?: string; readonly trace?: RequestTrace },
  ): Promise<ProxyResponse> {
    const u = this.upstreams.get(upstream);
    if (!u) throw new GatewayError('NOT_FOUND', { message: 'No such download link.' });
    const { target } = this.signer.verify(upstream, token);
    const q = target.indexOf('?');
    const accept = req.accept;
    return u.linkHandler({
      upstream,
      route: u.linkRoute,
      method: 'GET',
      path: q === -1 ? target : target.slice(0, q),
      query: q === -1 ? [] : parseQuery(target.slice(q + 1)),
      headers: {
        accept: accept ? accept : '*/*',
        'user-agent': 'Atrium-Gateway',
        'x-request-id': req.requestId,
      },
      consumerId: SIGNED_LINK_CONSUMER,
      requestId: req.requestId,
      format: 'json',
      credentialId: u.def.credentials.id,
      deadline: Date.now() + u.def.timeoutMs,
      noCache: true,
      weight: 1,
      trace: req.trace,
    });
  }

  async onApplicationShutdown(): Promise<void> {
    for (const u of this.upstreams.values()) {
      try {
        await u.def.credentials.close?.();
      } catch (e) {
        this.logger.warn(`closing credentials of ${u.def.name}: ${(e as Error).message}`);
      }
      await u.transport.close();
    }
  }
}

/**
 * Writes a pipeline answer to the client: bytes or a stream, the headers a client needs, cache headers. A
 * cached route's answer says how long a browser may keep it (`private`: it was authorised for one consumer)
 * and is `304 Not Modified`, without a body, when `If-None-Match` names its ETag. Buffered JSON and XML
 * answers are compressed by Accept-Encoding (`compress`); streamed files pass through as the vendor sent them.
 */
export function sendProxyResponse(
  reply: FastifyReply,
  res: ProxyResponse,
  ifNoneMatch?: string | string[],
  compress?: (reply: FastifyReply, body: Buffer, validator?: string) => FastifyReply,
): FastifyReply {
  if (res.cache) reply.header('x-cache', res.cache);
  if (res.ageSeconds !== undefined) reply.header('age', String(Math.max(0, Math.floor(res.ageSeconds))));
  const etag = res.freshForSeconds !== undefined ? res.headers.etag : undefined;
  if (etag !== undefined) {
    reply.header('cache-control', `private, max-age=${Math.floor(res.freshForSeconds!)}`);
    if (
      res.status === 200 &&
      etagMatches(Array.isArray(ifNoneMatch) ? ifNoneMatch.join(',') : ifNoneMatch, etag)
    )
      return reply.code(304).header('etag', etag).send();
  }
  reply.code(res.status);
  for (const name in res.headers) reply.header(name, res.headers[name]);
  if (compress !== undefined && Buffer.isBuffer(res.body)) return compress(reply, res.body, etag);
  return reply.send(res.body);
}
