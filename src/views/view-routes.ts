import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Consumer } from '../core/auth/consumer.js';
import { extractConsumerKey } from '../core/auth/consumer-key.js';
import { GatewayExceptionFilter } from '../core/errors/gateway-exception.filter.js';
import { SERVES_HANDLER } from '../core/ports/docs.port.js';
import { queryPairsOf } from '../core/http/query-string.js';
import { ConsumerThrottlerGuard } from '../core/throttling/consumer-throttler.guard.js';
import { ProxyRoutes } from '../proxy/proxy-routes.js';
import { ViewsService, type ViewResult } from './views.service.js';

/** Header that says whether every part answered (as KrakenD's `X-KrakenD-Completed`). */
export const COMPLETE_HEADER = 'x-atrium-complete';

/** The pattern `GET /views/{name}` is served at (the controller's docs-only handler names the same). */
export const VIEW_ROUTE_URL = '/views/:name';

const registered = new WeakSet<FastifyInstance>();

/**
 * `GET /views/{name}` as a plain Fastify route, as the proxied routes are (proxy-routes.ts): consumer
 * auth (401/403), the consumer's quota for the outer call (429, `RateLimit-*`, labelled `gateway` as the
 * guard labelled it), then the view, with no Nest router context per call. Each part then runs the checks
 * of its own route. The controller's handler is docs-only: the OpenAPI document and the policy test read it.
 */
@Injectable()
export class ViewRoutes implements OnApplicationBootstrap {
  constructor(
    private readonly views: ViewsService,
    private readonly routes: ProxyRoutes,
    private readonly throttler: ConsumerThrottlerGuard,
    private readonly filter: GatewayExceptionFilter,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  onApplicationBootstrap(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    // Bootstrap hooks may run more than once for one server.
    if (registered.has(fastify) || fastify.hasRoute({ method: 'GET', url: VIEW_ROUTE_URL })) return;
    registered.add(fastify);
    fastify.route({
      method: 'GET',
      url: VIEW_ROUTE_URL,
      config: { [SERVES_HANDLER]: 'ViewsController.run' },
      handler: (req: FastifyRequest, reply: FastifyReply): void => this.handle(req, reply),
    });
  }

  /** One view call, ending in exactly one send (the answer or the envelope). */
  handle(req: FastifyRequest, reply: FastifyReply): void {
    const key = extractConsumerKey(req);
    let consumer: Consumer;
    let admitted: void | Promise<void>;
    try {
      consumer = this.routes.authenticate(key, req.raw.socket);
      req.consumer = consumer;
      admitted = this.throttler.admit(consumer, reply, 'gateway');
    } catch (err) {
      this.filter.send(err, req, reply);
      return;
    }
    if (admitted)
      admitted.then(
        () => this.run(req, reply, key!, consumer),
        (err: unknown) => this.filter.send(err, req, reply),
      );
    else this.run(req, reply, key!, consumer);
  }

  private run(req: FastifyRequest, reply: FastifyReply, key: string, consumer: Consumer): void {
    const name = (req.params as { name?: string }).name ?? '';
    let result: ViewResult | Promise<ViewResult>;
    try {
      const lang = req.headers['accept-language'];
      const inm = req.headers['if-none-match'];
      result = this.views.run({
        name,
        query: queryPairsOf(req),
        caller: {
          // The parts run as the same consumer: permission, quota and validation run per part.
          key,
          ...(typeof lang === 'string' ? { acceptLanguage: lang } : {}),
          trace: req.trace,
          consumer,
        },
        requestId: String(req.id),
        ...(typeof inm === 'string' ? { ifNoneMatch: inm } : {}),
      });
    } catch (err) {
      this.filter.send(err, req, reply);
      return;
    }
    if (result instanceof Promise)
      result.then(
        (r) => send(reply, r),
        (err: unknown) => this.filter.send(err, req, reply),
      );
    else send(reply, result);
  }
}

function send(reply: FastifyReply, result: ViewResult): void {
  reply
    .header(COMPLETE_HEADER, result.complete ? 'true' : 'false')
    .header('cache-control', 'private, no-cache');
  if (result.etag) reply.header('etag', result.etag);
  if (result.retryAfter) reply.header('retry-after', result.retryAfter);
  if (result.notModified) {
    void reply.code(304).send();
    return;
  }
  void reply.code(result.status).header('content-type', 'application/json; charset=utf-8').send(result.body);
}
