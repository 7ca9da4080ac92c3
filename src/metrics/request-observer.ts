import { Injectable } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RequestLogger, type RequestLogLevel } from '../core/logging/request-log.js';
import { SecretRedactor } from '../core/logging/secret-redactor.js';
import { atriumRouteIn } from '../proxy/upstream-controller.factory.js';
import { GatewayMetrics, NO_UPSTREAM, type RouteSeries } from './gateway-metrics.js';
import { UpstreamTimings } from './upstream-timings.js';

const MAX_LOGGED_PATH = 256;

function round1(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/**
 * Observes every answered request once, in one Fastify `onResponse` hook: the request metrics and the one
 * log line are built from the same few values (route from the route's config, status, `X-Cache`, upstream
 * time, Fastify's elapsed time). Nothing here walks headers or bodies.
 */
@Injectable()
export class RequestObserver {
  private installed = false;
  private readonly series = new WeakMap<object, RouteSeries>();

  constructor(
    private readonly metrics: GatewayMetrics,
    private readonly timings: UpstreamTimings,
    private readonly log: RequestLogger,
    private readonly redactor: SecretRedactor,
  ) {}

  /**
   * Adds the hooks; called by configureApp before the routes are registered. `also` runs in the same
   * onResponse hook (the usage count): one hook per answered request, not one per concern.
   */
  install(fastify: FastifyInstance, also?: (req: FastifyRequest, reply: FastifyReply) => void): void {
    if (this.installed) return;
    this.installed = true;
    fastify.addHook('onResponse', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
      this.observe(req, reply);
      also?.(req, reply);
      done();
    });
    // An aborted request never reaches onResponse; drop its upstream time.
    fastify.addHook('onRequestAbort', (req: FastifyRequest, done: () => void) => {
      this.timings.take(String(req.id));
      done();
    });
  }

  /**
   * One answered request: its metrics and its log line. In-process route calls (batch items, view parts)
   * log at debug: the client's own request has its line at info, its parts are in its answer.
   */
  observe(
    req: FastifyRequest,
    reply: Pick<FastifyReply, 'statusCode' | 'elapsedTime' | 'getHeader'>,
    level: RequestLogLevel = 'info',
  ): void {
    // A proxied route's handler named it (no `routeOptions` getter, which builds an object per call).
    let atrium = req.atriumRoute;
    let config: object | undefined = atrium;
    let route: string;
    if (atrium !== undefined) route = atrium.routeId;
    else {
      const routeOptions = req.routeOptions;
      config = routeOptions.config;
      atrium = atriumRouteIn(config);
      // The registered pattern (`/health/ready`), never the raw path, for the gateway's own endpoints.
      route = atrium ? atrium.routeId : (routeOptions.url ?? 'unmatched');
    }
    const reqId = String(req.id);
    const status = reply.statusCode;
    const totalMs = reply.elapsedTime;
    const xCache = reply.getHeader('x-cache');
    const cache = typeof xCache === 'string' ? xCache : undefined;
    const upstreamMs = this.timings.take(reqId);
    const consumer = req.consumer?.id;
    const upstream = atrium ? atrium.upstream : NO_UPSTREAM;

    // The route's series are bound once, keyed by its (stable) route config object.
    let series = config ? this.series.get(config) : undefined;
    if (!series || series.route !== route || series.upstream !== upstream) {
      series = this.metrics.routeSeries(upstream, route);
      if (config) this.series.set(config, series);
    }
    this.metrics.observeRequest({ upstream, route, status, cache, totalMs, upstreamMs, consumer }, series);

    if (!this.log.enabledAt(level)) return;
    const url = req.url;
    const q = url.indexOf('?');
    let path = q === -1 ? url : url.slice(0, q);
    if (path.length > MAX_LOGGED_PATH) path = path.slice(0, MAX_LOGGED_PATH) + '…';
    this.log.write(
      {
        reqId,
        method: req.method,
        path: this.redactor.redact(path),
        route: atrium?.routeId,
        upstream: atrium?.upstream,
        consumer,
        status,
        cache,
        upstreamMs: upstreamMs === undefined ? undefined : round1(upstreamMs),
        ms: round1(totalMs),
        client: req.ip,
        traceId: req.trace?.traceId,
      },
      level,
    );
  }
}
