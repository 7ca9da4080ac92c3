import { Inject, Injectable } from '@nestjs/common';
import type { Registry } from 'prom-client';
import { FastCounter, FastHistogram, type CounterHandle, type HistogramHandle } from './fast-metrics.js';
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

interface RequestSeries {
  count: CounterHandle;
  duration: HistogramHandle;
}

/**
 * The gateway's own metrics (names and labels agreed across issues, see README "Metrics"). Series handles
 * are cached per label combination, so the hot path does one Map lookup and adds numbers (fast-metrics.ts).
 * Every label value is bounded: upstream names, route ids, status classes, cache outcomes and configured
 * consumer ids.
 */
@Injectable()
export class GatewayMetrics implements UpstreamMetrics {
  private readonly requests: FastCounter;
  private readonly requestDuration: FastHistogram;
  private readonly gatewayDuration: FastHistogram;
  private readonly upstreamRequests: FastCounter;
  private readonly upstreamDuration: FastHistogram;
  private readonly keyEchoScrubs: FastCounter;
  private readonly consumerRequests: FastCounter;

  private readonly requestSeries = new Map<string, RequestSeries>();
  private readonly gatewaySeries = new Map<string, HistogramHandle>();
  private readonly consumerSeries = new Map<string, CounterHandle>();

  constructor(
    @Inject(METRICS_REGISTRY) registry: Registry,
    private readonly timings: UpstreamTimings,
  ) {
    this.requests = new FastCounter(
      'atrium_requests_total',
      'Requests answered by the gateway, by upstream, route id, status class and cache outcome.',
      ['upstream', 'route', 'status_class', 'cache'],
      registry,
    );
    this.requestDuration = new FastHistogram(
      'atrium_request_duration_seconds',
      'Total time of a request in the gateway (upstream time included), by upstream, route id and cache outcome.',
      ['upstream', 'route', 'cache'],
      DURATION_BUCKETS,
      registry,
    );
    this.gatewayDuration = new FastHistogram(
      'atrium_gateway_duration_seconds',
      "The gateway's own share of a request's time: total time minus the time spent waiting on the upstream.",
      ['upstream'],
      DURATION_BUCKETS,
      registry,
    );
    this.upstreamRequests = new FastCounter(
      'atrium_upstream_requests_total',
      'Calls made to an upstream (each attempt), by upstream, route id and the status class of its answer (none: no answer).',
      ['upstream', 'route', 'status_class'],
      registry,
    );
    this.upstreamDuration = new FastHistogram(
      'atrium_upstream_duration_seconds',
      'Time spent waiting on an upstream per call (until its answer was read; for files, until its headers).',
      ['upstream'],
      DURATION_BUCKETS,
      registry,
    );
    this.keyEchoScrubs = new FastCounter(
      'atrium_key_echo_scrubs_total',
      "Echoes of the gateway's upstream key removed from upstream answers and error messages.",
      ['upstream'],
      registry,
    );
    this.consumerRequests = new FastCounter(
      'atrium_consumer_requests_total',
      'Authenticated requests, by consumer id and upstream.',
      ['consumer', 'upstream'],
      registry,
    );
  }

  /** One answered request (called once per response by the RequestObserver). */
  observeRequest(r: ObservedRequest): void {
    const cache = r.cache ? r.cache.toLowerCase() : 'none';
    const cls = statusClass(r.status);
    const key = `${r.upstream}\u0000${r.route}\u0000${cls}\u0000${cache}`;
    let series = this.requestSeries.get(key);
    if (!series) {
      series = {
        count: this.requests.labels(r.upstream, r.route, cls, cache),
        duration: this.requestDuration.labels(r.upstream, r.route, cache),
      };
      this.requestSeries.set(key, series);
    }
    series.count.inc();
    const seconds = r.totalMs / 1000;
    series.duration.observe(seconds);

    let own = this.gatewaySeries.get(r.upstream);
    if (!own) {
      own = this.gatewayDuration.labels(r.upstream);
      this.gatewaySeries.set(r.upstream, own);
    }
    own.observe(Math.max(0, r.totalMs - (r.upstreamMs ?? 0)) / 1000);

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
    const counters = new Map<string, CounterHandle>();
    const timings = this.timings;
    return (routeId, status, ms, requestId) => {
      const cls = statusClass(status);
      const key = `${routeId}\u0000${cls}`;
      let c = counters.get(key);
      if (!c) {
        c = this.upstreamRequests.labels(upstream, routeId, cls);
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
