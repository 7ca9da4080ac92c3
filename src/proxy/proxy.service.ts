import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../core/errors/gateway-error.js';
import { SecretRedactor } from '../core/logging/secret-redactor.js';
import type { Handler, ProxyResponse, RouteDefinition } from './pipeline.types.js';
import { PIPELINE_SETTINGS, PipelineFactory, type PipelineSettings } from './pipeline.factory.js';
import { buildProxyRequest, compileRoute, type CompiledRoute } from './request-builder.js';
import { UndiciTransport } from './transport/undici.transport.js';
import type { UpstreamDefinition } from './upstream-definition.js';

export interface RegisteredUpstream {
  readonly def: UpstreamDefinition;
  readonly handler: Handler;
  readonly transport: UndiciTransport;
}

/**
 * Holds one composed pipeline per upstream (built once, at registration) and forwards requests through it.
 * Upstream modules register their definition when they initialise.
 */
@Injectable()
export class ProxyService implements OnApplicationShutdown {
  private readonly logger = new Logger('Proxy');
  private readonly upstreams = new Map<string, RegisteredUpstream>();
  private readonly routes = new Map<RouteDefinition, CompiledRoute & { handler: Handler }>();

  constructor(
    private readonly pipeline: PipelineFactory,
    private readonly redactor: SecretRedactor,
    @Inject(PIPELINE_SETTINGS) private readonly settings: PipelineSettings,
  ) {}

  register(def: UpstreamDefinition): void {
    if (this.upstreams.has(def.name)) throw new Error(`upstream ${def.name} registered twice`);
    const transport = new UndiciTransport({ ...def.transport, upstream: def.name, title: def.title });
    const handler = this.pipeline.build(def, transport.handler, this.settings);
    for (const s of def.credentials.secrets()) this.redactor.register(s);
    this.upstreams.set(def.name, { def, handler, transport });
    for (const route of def.routes) this.routes.set(route, { ...compileRoute(def, route), handler });
  }

  upstream(name: string): RegisteredUpstream | undefined {
    return this.upstreams.get(name);
  }

  all(): RegisteredUpstream[] {
    return [...this.upstreams.values()];
  }

  /** Runs a consumer's request for `route` through its upstream's pipeline. */
  async forward(route: RouteDefinition, req: FastifyRequest): Promise<ProxyResponse> {
    const compiled = this.routes.get(route);
    if (!compiled) throw new GatewayError('INTERNAL', { message: 'Route is not registered.' });
    const consumer = req.consumer;
    if (!consumer) throw new GatewayError('UNAUTHENTICATED');
    return compiled.handler(buildProxyRequest(compiled, req, consumer));
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
