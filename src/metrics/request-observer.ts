import { Injectable } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RequestLogger, type RequestLogLevel } from '../core/logging/request-log.js';
import { SecretRedactor } from '../core/logging/secret-redactor.js';
import { atriumRouteIn, type AtriumRouteConfig } from '../proxy/upstream-controller.factory.js';
import { GatewayMetrics, NO_UPSTREAM, type RouteSeries } from './gateway-metrics.js';
import { UpstreamTimings } from './upstream-timings.js';

const MAX_LOGGED_PATH = 256;

function round1(ms: number): number {
  return Math.round(ms * 10) / 10;
}

/** What one answered request is observed from. */
export interface ObservedCall {
  readonly reqId: string;
  readonly method: string;
  readonly url: string;
  /** The proxied route, if it is one. */
  readonly atrium?: AtriumRouteConfig;
  /** The registered pattern of any other route. */
  readonly routeUrl?: string;
  readonly status: number;
  readonly elapsedMs: number;
  /** `X-Cache` of the answer. */
  readonly cache?: string;
  readonly consumer?: string;
  readonly client?: string;
  readonly traceId?: string;
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

  /** One answered client request: its metrics and its log line. */
  observe(req: FastifyRequest, reply: Pick<FastifyReply, 'statusCode' | 'elapsedTime' | 'getHeader'>): void {
    const routeOptions = req.routeOptions;
    const xCache = reply.getHeader('x-cache');
    this.record(
      {
        reqId: String(req.id),
        method: req.method,
        url: req.url,
        // The registered pattern (`/health/ready`), never the raw path, for the gateway's own endpoints.
        routeUrl: routeOptions.url,
        atrium: atriumRouteIn(routeOptions.config),
        status: reply.statusCode,
        elapsedMs: reply.elapsedTime,
        cache: typeof xCache === 'string' ? xCache : undefined,
        consumer: req.consumer?.id,
        client: req.ip,
        traceId: req.trace?.traceId,
      },
      'info',
      routeOptions.config,
    );
  }

  /**
   * One answered request or inner call (a batch item, a view part): its metrics and its log line. Inner
   * calls log at debug: the client's own request has its line at info, its parts are in its answer.
   * `seriesKey` is a stable object of the route (its config) the route's metric series are bound to.
   */
  record(call: ObservedCall, level: RequestLogLevel, seriesKey: object | undefined): void {
    const { atrium, reqId, status } = call;
    const route = atrium ? atrium.routeId : (call.routeUrl ?? 'unmatched');
    const upstreamMs = this.timings.take(reqId);
    const consumer = call.consumer;
    const upstream = atrium ? atrium.upstream : NO_UPSTREAM;

    let series = seriesKey ? this.series.get(seriesKey) : undefined;
    if (!series || series.route !== route || series.upstream !== upstream) {
      series = this.metrics.routeSeries(upstream, route);
      if (seriesKey) this.series.set(seriesKey, series);
    }
    const { cache, elapsedMs: totalMs } = call;
    this.metrics.observeRequest({ upstream, route, status, cache, totalMs, upstreamMs, consumer }, series);

    if (!this.log.enabledAt(level)) return;
    const url = call.url;
    const q = url.indexOf('?');
    let path = q === -1 ? url : url.slice(0, q);
    if (path.length > MAX_LOGGED_PATH) path = path.slice(0, MAX_LOGGED_PATH) + '…';
    this.log.write(
      {
        reqId,
        method: call.method,
        path: this.redactor.redact(path),
        route: atrium?.routeId,
        upstream: atrium?.upstream,
        consumer,
        status,
        cache,
        upstreamMs: upstreamMs === undefined ? undefined : round1(upstreamMs),
        ms: round1(totalMs),
        client: call.client,
        traceId: call.traceId,
      },
      level,
    );
  }
}
