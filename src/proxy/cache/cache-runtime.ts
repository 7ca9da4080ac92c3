import type { CacheConfig } from '../../config/atrium-config.js';
import type { ProxyRequest, ProxyResponse } from '../pipeline.types.js';
import type { CacheEntry } from './cache-entry.js';
import type { CacheKey } from './cache-key.js';
import type { CacheMetrics } from './cache-metrics.js';
import type { RoutePolicy } from './cache-policy.js';
import type { ResponseStore } from './response-store.js';

export type CachedPolicy = Extract<RoutePolicy, { kind: 'cache' }>;

/**
 * What the cache stage hands the coalescing stage for one cacheable miss (through a WeakMap keyed by the
 * request, so ProxyRequest needs no cache fields).
 */
export interface MissContext {
  readonly key: CacheKey;
  readonly policy: CachedPolicy;
  /** The entry the lookup found (stale, or ignored for `no-cache`): a waiter wants a newer one. */
  readonly previous?: CacheEntry;
  /** A stale-while-revalidate refresh: nobody waits for it, so it never waits on another replica. */
  readonly background: boolean;
  /** Set by the coalescing stage: whether this request's answer came from someone else's call. */
  outcome: 'MISS' | 'COALESCED';
  /** Set when the answer was read back from the store (for `Age`). */
  entry?: CacheEntry;
}

export type CacheSettings = Pick<
  CacheConfig,
  'maxEntryBytes' | 'ttlOverrides' | 'staleWhileRevalidateMs' | 'staleIfErrorMs' | 'negativeTtlMs'
>;

/** Shared by one upstream's cache and coalescing stages. */
export interface CacheRuntime {
  readonly store: ResponseStore;
  readonly settings: CacheSettings;
  readonly metrics: CacheMetrics;
  readonly contexts: WeakMap<ProxyRequest, MissContext>;
}

/** A client answer built from a stored entry: the stored headers and Buffer themselves, no copy. */
export function answerFrom(entry: CacheEntry, cache: ProxyResponse['cache'], now: number): ProxyResponse {
  return {
    status: entry.status,
    headers: entry.headers,
    body: entry.body,
    cache,
    ageSeconds: (now - entry.storedAt) / 1000,
  };
}

/** How long an entry is kept: its TTL plus the longer of the two stale windows. */
export function retentionMs(ttlMs: number, s: CacheSettings): number {
  return ttlMs + Math.max(s.staleWhileRevalidateMs, s.staleIfErrorMs);
}

export function validateSettings(s: CacheSettings): void {
  for (const k of ['maxEntryBytes', 'staleWhileRevalidateMs', 'staleIfErrorMs', 'negativeTtlMs'] as const)
    if (!(s[k] >= 0)) throw new Error(`cache: ${k} must be ≥ 0`);
  for (const [family, ms] of Object.entries(s.ttlOverrides))
    if (!(ms >= 0)) throw new Error(`cache: TTL override for ${family} must be ≥ 0`);
}
