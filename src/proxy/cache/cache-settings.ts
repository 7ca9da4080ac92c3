import type { CacheConfig } from '../../config/atrium-config.js';
import type { ProxyResponse } from '../pipeline.types.js';
import type { CacheEntry } from './cache-entry.js';

/** The cache settings the cache and coalescing stages read (a slice of the `cache` config). */
export type CacheSettings = Pick<
  CacheConfig,
  'maxEntryBytes' | 'ttlOverrides' | 'staleWhileRevalidateMs' | 'staleIfErrorMs' | 'negativeTtlMs'
>;

/** A client answer built from a stored entry: the stored headers and Buffer themselves, no copy. */
export function answerFrom(entry: CacheEntry, cache: ProxyResponse['cache'], now: number): ProxyResponse {
  return {
    status: entry.status,
    headers: entry.headers,
    body: entry.body,
    cache,
    ageSeconds: (now - entry.storedAt) / 1000,
    freshForSeconds: Math.max(0, (entry.freshUntil - now) / 1000),
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
