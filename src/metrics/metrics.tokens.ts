/**
 * The one Prometheus registry of a gateway instance. Modules register their own counters and gauges on it
 * (`registers: [registry]`); a fresh registry per app keeps several apps in one test process apart.
 */
export const METRICS_REGISTRY = Symbol('MetricsRegistry');
