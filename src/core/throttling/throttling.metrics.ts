import { Counter, Gauge, type Registry } from 'prom-client';

// Some metrics are shared by the inbound throttler (core) and the upstream limits (proxy): whoever starts
// first creates them on the app's registry, the other reuses them, so no name is registered twice.

function once<T>(registry: Registry, name: string, create: () => T): T {
  return (registry.getSingleMetric(name) as T | undefined) ?? create();
}

/** `atrium_redis_errors_total{component}`: Redis calls that failed and were answered without Redis. */
export function redisErrorsCounter(registry: Registry): Counter<'component'> {
  return once(
    registry,
    'atrium_redis_errors_total',
    () =>
      new Counter({
        name: 'atrium_redis_errors_total',
        help: 'Redis calls that failed; the request was served without Redis (fail open or local fallback).',
        labelNames: ['component'] as const,
        registers: [registry],
      }),
  );
}

/** `atrium_rate_limited_total{upstream,kind}`: 429s the gateway answered (kind = consumer | upstream). */
export function rateLimitedCounter(registry: Registry): Counter<'upstream' | 'kind'> {
  return once(
    registry,
    'atrium_rate_limited_total',
    () =>
      new Counter({
        name: 'atrium_rate_limited_total',
        help: 'Requests answered 429: kind=consumer for a consumer quota, kind=upstream for an upstream budget or cooldown.',
        labelNames: ['upstream', 'kind'] as const,
        registers: [registry],
      }),
  );
}

/** A gauge whose values are read at scrape time (no per-request work). */
export function collectedGauge<L extends string>(
  registry: Registry,
  name: string,
  help: string,
  labelNames: readonly L[],
  collect: (set: (labels: Record<L, string>, value: number) => void) => void,
): Gauge<L> {
  return once(
    registry,
    name,
    () =>
      new Gauge<L>({
        name,
        help,
        labelNames,
        registers: [registry],
        collect(this: Gauge<L>) {
          collect((labels, value) => this.set(labels as Partial<Record<L, string | number>>, value));
        },
      }),
  );
}
