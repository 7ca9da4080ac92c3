import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../core/errors/gateway-error.js';
import { BoundedMemo } from '../core/memo/bounded-memo.js';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { isConsumerKeyParam } from '../core/auth/consumer.js';
import { GatewaySecretShapes } from '../core/auth/gateway-key-shape.js';
import type { FieldSelection } from '../core/http/field-selection.js';
import { parseQuery, queryPairsOf } from '../core/http/query-string.js';
import type { CacheKey } from './cache/cache-key.js';
import { SecretRedactor } from '../core/logging/secret-redactor.js';
import { UPSTREAM_METRICS, type UpstreamMetrics } from '../core/ports/metrics.port.js';
import { LINK_SIGNER, type LinkSigner } from './links/link-signer.js';
import { TRACING_STAGES, USAGE_STAGES, type TracingStages, type UsageStages } from './pipeline-extensions.js';
import { buildPipelines, type PipelineParts } from './pipeline.js';
import type { EntryAnswer, EntryHandler, Handler, ProxyResponse, RouteDefinition } from './pipeline.types.js';
import {
  buildProxyRequest,
  compileRoute,
  header,
  wantsNoCache,
  type CompiledRoute,
} from './request-builder.js';
import { ResponseCache } from './response-cache.service.js';
import { selectResponseFields, takeFieldSelection } from './response-fields.js';
import { UndiciTransport } from './transport/undici.transport.js';
import type { UpstreamDefinition } from './upstream-definition.js';
import { UpstreamLimitsService } from './upstream-limits.service.js';

export interface RegisteredUpstream {
  readonly def: UpstreamDefinition;
  readonly handler: EntryHandler;
  readonly transport: UndiciTransport;
  /** Follows the upstream's signed links (streamed, with our credential). */
  readonly linkHandler: Handler;
  readonly linkRoute: RouteDefinition;
}

/** A request seen before: its cache key and its field selection (both follow from the URL and headers). */
interface SeenRequest {
  readonly key: CacheKey;
  readonly fields: FieldSelection | undefined;
}

interface ForwardRoute extends CompiledRoute {
  readonly handler: EntryHandler;
  readonly freshHit?: (key: CacheKey) => ProxyResponse | undefined;
  /** By URL and negotiation headers; bounded (oldest out first). */
  readonly seen?: BoundedMemo<string, SeenRequest>;
}

const MAX_SEEN = 2048;
const MAX_SEEN_KEY = 1024;

/** What a GET's upstream request and cache key follow from: its URL and the two negotiated headers. */
function seenKeyOf(req: FastifyRequest): string | undefined {
  const key = req.url + '\n' + (header(req, 'accept') ?? '') + '\n' + (header(req, 'accept-language') ?? '');
  return key.length <= MAX_SEEN_KEY ? key : undefined;
}

function carriesConsumerKey(req: FastifyRequest): boolean {
  for (const [k] of queryPairsOf(req)) if (isConsumerKeyParam(k)) return true;
  return false;
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
    const { handler, linkHandler, freshHit } = buildPipelines(def, transport.handler, this.parts);
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
    for (const route of def.routes)
      this.routes.set(route, {
        ...compileRoute(def, route),
        handler,
        // Only GETs are answered from the cache; only a store read synchronously makes the shortcut pay.
        ...(route.method === 'GET' && !route.file && freshHit
          ? { freshHit, seen: new BoundedMemo<string, SeenRequest>(MAX_SEEN) }
          : {}),
      });
  }

  upstream(name: string): RegisteredUpstream | undefined {
    return this.upstreams.get(name);
  }

  all(): RegisteredUpstream[] {
    return [...this.upstreams.values()];
  }

  /**
   * Runs a consumer's request for `route` through its upstream's pipeline. A fresh hit answers synchronously
   * (no promise); a cached error, and a refusal decided at the cache lookup, are the returned error
   * (`EntryAnswer`: not thrown, so a storm of them runs optimised code); a request that cannot be forwarded
   * at all throws.
   *
   * A GET seen before (the same URL and negotiation headers) skips building the upstream request and its
   * cache key: the key is remembered, and a fresh entry under it is the answer. Anything else (no entry,
   * stale, a cached error, `no-cache`, exported spans) takes the full pipeline, which decides as before.
   */
  forward(route: RouteDefinition, req: FastifyRequest): EntryAnswer {
    const compiled = this.routes.get(route);
    if (!compiled) throw new GatewayError('INTERNAL', { message: 'Route is not registered.' });
    const consumer = req.consumer;
    if (!consumer) throw new GatewayError('UNAUTHENTICATED');
    const seenAs = compiled.seen && !req.trace?.spans ? seenKeyOf(req) : undefined;
    if (seenAs !== undefined) {
      const seen = compiled.seen!.peek(seenAs);
      if (seen !== undefined && !wantsNoCache(req)) {
        const res = compiled.freshHit!(seen.key);
        if (res) return seen.fields ? selectResponseFields(res, seen.fields) : res;
      }
    }
    // A spelling is remembered unless the URL carries a consumer key (a secret never becomes a key of anything).
    const remember = seenAs !== undefined && !carriesConsumerKey(req);
    const proxyReq = buildProxyRequest(compiled, req, consumer, remember, this.gatewaySecrets);
    const fields = takeFieldSelection(proxyReq);
    const res = compiled.handler(proxyReq);
    // The cache stage named the key (synchronously, before any wait): remember it for this request's spelling,
    // unless the answer is an error decided at once (a refusal, a cached 404). A repeat of it takes the whole
    // pipeline anyway, and a 429 storm of new URLs would only push out the spellings hits are answered by.
    if (remember && proxyReq.cacheKey && !(res instanceof GatewayError))
      compiled.seen!.get(seenAs, () => ({ key: proxyReq.cacheKey!, fields }));
    if (!fields || res instanceof GatewayError) return res;
    return res instanceof Promise
      ? res.then((r) => selectResponseFields(r, fields))
      : selectResponseFields(res, fields);
  }

  /** The request spellings remembered for `route` (tests check that no consumer key ever becomes one). */
  rememberedOf(route: RouteDefinition): string[] {
    return this.routes.get(route)?.seen?.keys() ?? [];
  }

  /**
   * Follows a gateway-signed link (README "Key custody"): checks the signature and expiry (403 otherwise),
   * then GETs the signed target from the upstream with our credential and streams the answer.
   */
  async followLink(upstream: string, token: unknown, req: FastifyRequest): Promise<ProxyResponse> {
    const u = this.upstreams.get(upstream);
    if (!u) throw new GatewayError('NOT_FOUND', { message: 'No such download link.' });
    const { target } = this.signer.verify(upstream, token);
    const q = target.indexOf('?');
    const accept = req.headers.accept;
    return u.linkHandler({
      upstream,
      route: u.linkRoute,
      method: 'GET',
      path: q === -1 ? target : target.slice(0, q),
      query: q === -1 ? [] : parseQuery(target.slice(q + 1)),
      headers: {
        accept: typeof accept === 'string' && accept ? accept : '*/*',
        'user-agent': 'Atrium-Gateway',
        'x-request-id': String(req.id),
      },
      consumerId: SIGNED_LINK_CONSUMER,
      requestId: String(req.id),
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

/** Writes a pipeline answer to the client: bytes or a stream, the headers a client needs, cache headers. */
export function sendProxyResponse(reply: FastifyReply, res: ProxyResponse): FastifyReply {
  reply.code(res.status);
  for (const name in res.headers) reply.header(name, res.headers[name]);
  if (res.cache) reply.header('x-cache', res.cache);
  if (res.ageSeconds !== undefined) reply.header('age', String(Math.max(0, Math.floor(res.ageSeconds))));
  return reply.send(res.body);
}
