import { Inject, Injectable } from '@nestjs/common';
import { Counter, Histogram, type Registry } from 'prom-client';
import {
  METRICS_REGISTRY,
  type UpstreamCallRecorder,
  type UpstreamMetrics,
} from '../core/ports/metrics.port.js';
import { statusClass } from './status-class.js';
import { UpstreamTimings } from './upstream-timings.js';

/** Seconds; the low buckets resolve cache hits, the high ones slow upstreams (deadlines go to 10 s+). */
const DURATION_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/** Label value for requests that reached no upstream operation (health, metrics, docs, unknown paths). */
export const NO_UPSTREAM = 'none';

export interface ObservedRequest {
  /** Upstream name, or `none`. */
  readonly upstream: string;
  /** Route id (`macro.feeds.list`) or the gateway's registered route pattern (`/health/ready`); never a raw path. */
  readonly route: string;
  readonly status: number;
  /** `X-Cache` of the answer, if any. */
  readonly cache: string | undefined;
  readonly totalMs: number;
  /** Upstream time spent for this request, if an upstream was called. */
  readonly upstreamMs: number | undefined;
  /** Consumer id (from config: bounded), if authenticated. */
  readonly consumer: string | undefined;
}

/** `X-Cache` outcomes as metric labels; anything else (no cache stage) is `none`. */
const CACHE_LABELS = ['none', 'hit', 'miss', 'stale', 'coalesced', 'bypass'] as const;
const CACHE_INDEX: Readonly<Record<string, number>> = {
  HIT: 1,
  MISS: 2,
  STALE: 3,
  COALESCED: 4,
  BYPASS: 5,
} satisfies Record<Uppercase<Exclude<(typeof CACHE_LABELS)[number], 'none'>>, number>;
/** Status classes as statusClass() names them, by hundreds (index 0: no answer). */
const CLASS_LABELS = ['none', '1xx', '2xx', '3xx', '4xx', '5xx'] as const;

/** `status` label: the HTTP status code, or `none` when there was no answer. */
function statusLabel(status: number | undefined): string {
  return status !== undefined && status >= 100 && status < 600 ? String(status) : 'none';
}

/** The series of one route: handles bound on first use per status code and cache outcome. */
export class RouteSeries {
  /** By cache outcome, then by status code (0: not an HTTP status). */
  private readonly counts: Array<Array<Counter.Internal | undefined> | undefined> = [];
  private readonly durations: Array<Histogram.Internal<string> | undefined> = [];

  constructor(
    private readonly requests: Counter,
    private readonly requestDuration: Histogram,
    readonly upstream: string,
    readonly route: string,
    private readonly own: Histogram.Internal<string>,
  ) {}

  observe(status: number, cache: string | undefined, totalMs: number, upstreamMs: number | undefined): void {
    const ci = cache === undefined ? 0 : (CACHE_INDEX[cache] ?? -1);
    // An unknown outcome keeps its own (lower-cased) label, as before: rare, so the slow path.
    const cacheLabel = ci >= 0 ? CACHE_LABELS[ci] : cache!.toLowerCase();
    const valid = status >= 100 && status < 600;
    const si = valid ? Math.floor(status / 100) : 0;
    if (ci < 0) {
      this.requests
        .labels(this.upstream, this.route, CLASS_LABELS[si], statusLabel(status), cacheLabel)
        .inc();
      this.requestDuration.labels(this.upstream, this.route, cacheLabel).observe(totalMs / 1000);
    } else {
      let byStatus = this.counts[ci];
      if (byStatus === undefined) this.counts[ci] = byStatus = [];
      const code = valid ? status : 0;
      let count = byStatus[code];
      if (count === undefined) {
        count = this.requests.labels(
          this.upstream,
          this.route,
          CLASS_LABELS[si],
          statusLabel(status),
          cacheLabel,
        );
        byStatus[code] = count;
      }
      count.inc();
      let duration = this.durations[ci];
      if (duration === undefined) {
        duration = this.requestDuration.labels(this.upstream, this.route, cacheLabel);
        this.durations[ci] = duration;
      }
      duration.observe(totalMs / 1000);
    }
    this.own.observe(Math.max(0, totalMs - (upstreamMs ?? 0)) / 1000);
  }
}

/**
 * The gateway's own metrics (names and labels agreed across issues, see README "Metrics"). Series handles
 * (prom-client children from `.labels(...)`) are cached per label combination.
 * Every label value is bounded: upstream names, route ids, status classes, cache outcomes and configured
 * consumer ids.
 */
@Injectable()
export class GatewayMetrics implements UpstreamMetrics {
  private readonly requests: Counter;
  private readonly requestDuration: Histogram;
  private readonly gatewayDuration: Histogram;
  private readonly upstreamRequests: Counter;
  private readonly upstreamDuration: Histogram;
  private readonly keyEchoScrubs: Counter;
  private readonly consumerRequests: Counter;

  private readonly routeSeriesByKey = new Map<string, RouteSeries>();
  private readonly gatewaySeries = new Map<string, Histogram.Internal<string>>();
  private readonly consumerSeries = new Map<string, Counter.Internal>();

  constructor(
    @Inject(METRICS_REGISTRY) registry: Registry,
    private readonly timings: UpstreamTimings,
  ) {
    this.requests = new Counter({
      name: 'atrium_requests_total',
      help: 'Requests answered by the gateway, by upstream, route id, status class, status code and cache outcome.',
      labelNames: ['upstream', 'route', 'status_class', 'status', 'cache'],
      registers: [registry],
    });
    this.requestDuration = new Histogram({
      name: 'atrium_request_duration_seconds',
      help: 'Total time of a request in the gateway (upstream time included), by upstream, route id and cache outcome.',
      labelNames: ['upstream', 'route', 'cache'],
      buckets: DURATION_BUCKETS,
      registers: [registry],
    });
    this.gatewayDuration = new Histogram({
      name: 'atrium_gateway_duration_seconds',
      help: "The gateway's own share of a request's time: total time minus the time spent waiting on the upstream.",
      labelNames: ['upstream'],
      buckets: DURATION_BUCKETS,
      registers: [registry],
    });
    this.upstreamRequests = new Counter({
      name: 'atrium_upstream_requests_total',
      help: 'Calls made to an upstream (each attempt), by upstream, route id and the status class and code of its answer (none: no answer).',
      labelNames: ['upstream', 'route', 'status_class', 'status'],
      registers: [registry],
    });
    this.upstreamDuration = new Histogram({
      name: 'atrium_upstream_duration_seconds',
      help: 'Time spent waiting on an upstream per call (until its answer was read; for files, until its headers).',
      labelNames: ['upstream'],
      buckets: DURATION_BUCKETS,
      registers: [registry],
    });
    this.keyEchoScrubs = new Counter({
      name: 'atrium_key_echo_scrubs_total',
      help: "Echoes of the gateway's upstream key removed from upstream answers and error messages.",
      labelNames: ['upstream'],
      registers: [registry],
    });
    this.consumerRequests = new Counter({
      name: 'atrium_consumer_requests_total',
      help: 'Authenticated requests, by consumer id and upstream.',
      labelNames: ['consumer', 'upstream'],
      registers: [registry],
    });
  }

  /**
   * The request series of one route, bound once (the RequestObserver keeps it with the route): a request
   * then indexes two small arrays by status class and cache outcome, no label string built, no Map lookup.
   */
  routeSeries(upstream: string, route: string): RouteSeries {
    const key = `${upstream}\u0000${route}`;
    let s = this.routeSeriesByKey.get(key);
    if (!s) {
      let own = this.gatewaySeries.get(upstream);
      if (!own) {
        own = this.gatewayDuration.labels(upstream);
        this.gatewaySeries.set(upstream, own);
      }
      s = new RouteSeries(this.requests, this.requestDuration, upstream, route, own);
      this.routeSeriesByKey.set(key, s);
    }
    return s;
  }

  /** One answered request (called once per response by the RequestObserver). */
  observeRequest(r: ObservedRequest, series = this.routeSeries(r.upstream, r.route)): void {
    series.observe(r.status, r.cache, r.totalMs, r.upstreamMs);
    if (r.consumer !== undefined) {
      const ckey = `${r.consumer}\u0000${r.upstream}`;
      let c = this.consumerSeries.get(ckey);
      if (!c) {
        c = this.consumerRequests.labels(r.consumer, r.upstream);
        this.consumerSeries.set(ckey, c);
      }
      c.inc();
    }
  }

  /** A recorder for one upstream's calls; its series start at zero so dashboards see the upstream at once. */
  upstreamCallRecorder(upstream: string): UpstreamCallRecorder {
    const duration = this.upstreamDuration.labels(upstream);
    const counters = new Map<string, Counter.Internal>();
    const timings = this.timings;
    return (routeId, status, ms, requestId) => {
      const code = statusLabel(status);
      const key = `${routeId}\u0000${code}`;
      let c = counters.get(key);
      if (!c) {
        c = this.upstreamRequests.labels(upstream, routeId, statusClass(status), code);
        counters.set(key, c);
      }
      c.inc();
      duration.observe(ms / 1000);
      timings.add(requestId, ms);
    };
  }

  /** The `onScrub` callback of an upstream's credentials stage. */
  keyEchoScrubRecorder(upstream: string): (count: number) => void {
    const c = this.keyEchoScrubs.labels(upstream);
    c.inc(0);
    return (count) => c.inc(count);
  }
}
