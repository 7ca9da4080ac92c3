import { Counter, type Registry } from 'prom-client';

export const CACHE_METRICS = Symbol('CacheMetrics');

export const CACHE_OUTCOMES = ['hit', 'miss', 'stale', 'coalesced', 'bypass', 'store_skip'] as const;
export type CacheEvent = (typeof CACHE_OUTCOMES)[number];

/** Per-upstream counter children, bound once so the hot path does no label lookups. */
export type CacheEventCounters = Readonly<Record<CacheEvent, { inc(): void }>>;

/**
 * `atrium_cache_events_total{upstream,outcome}` and `atrium_cache_redis_errors_total` on the app's registry.
 * Labels are bounded: upstream names and the fixed outcome list. An event adds 1 to a plain number; the
 * counter takes the additions when it is read (prom-client's `collect`), so a cache hit pays no label
 * hashing.
 */
export class CacheMetrics {
  private readonly events: Counter<'upstream' | 'outcome'>;
  readonly redisErrors: Counter;
  private readonly bound = new Map<string, CacheEventCounters>();
  private readonly pending: Array<{ upstream: string; outcome: CacheEvent; n: number }> = [];

  constructor(registry: Registry) {
    const pending = this.pending;
    this.events = new Counter({
      name: 'atrium_cache_events_total',
      help: 'Response cache outcomes per upstream: hit, miss, stale, coalesced, bypass, store_skip.',
      labelNames: ['upstream', 'outcome'],
      registers: [registry],
      collect() {
        for (const p of pending)
          if (p.n > 0) {
            this.inc({ upstream: p.upstream, outcome: p.outcome }, p.n);
            p.n = 0;
          }
      },
    });
    this.redisErrors = new Counter({
      name: 'atrium_cache_redis_errors_total',
      help: 'Failed Redis operations of the response cache (each one fell back to the upstream or skipped a store).',
      registers: [registry],
    });
  }

  forUpstream(upstream: string): CacheEventCounters {
    let c = this.bound.get(upstream);
    if (!c) {
      const entries = CACHE_OUTCOMES.map((outcome) => {
        // Exported at zero from the start, as a bound child would be.
        this.events.labels({ upstream, outcome }).inc(0);
        const p = { upstream, outcome, n: 0 };
        this.pending.push(p);
        return [outcome, { inc: () => void p.n++ }] as const;
      });
      c = Object.fromEntries(entries) as unknown as CacheEventCounters;
      this.bound.set(upstream, c);
    }
    return c;
  }
}
