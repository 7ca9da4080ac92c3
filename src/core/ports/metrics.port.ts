/**
 * The metrics port: what lower layers (core, proxy) may ask of the metrics module without importing it.
 * MetricsModule provides both tokens.
 */

/**
 * The one Prometheus registry of a gateway instance. Modules register their own counters and gauges on it
 * (`registers: [registry]`); a fresh registry per app keeps several apps in one test process apart.
 */
export const METRICS_REGISTRY = Symbol('MetricsRegistry');

/** Records one upstream call (one attempt) of a route: called by the upstream-metrics pipeline stage. */
export type UpstreamCallRecorder = (
  routeId: string,
  status: number | undefined,
  ms: number,
  requestId: string,
) => void;

/** Per-upstream recorders the pipeline binds once, at composition. */
export interface UpstreamMetrics {
  /** A recorder for one upstream's calls; its series start at zero so dashboards see the upstream at once. */
  upstreamCallRecorder(upstream: string): UpstreamCallRecorder;
  /** The `onScrub` callback of an upstream's key-echo stage. */
  keyEchoScrubRecorder(upstream: string): (count: number) => void;
}

export const UPSTREAM_METRICS = Symbol('UpstreamMetrics');
