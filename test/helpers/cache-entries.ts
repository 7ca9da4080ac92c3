import { newEntryId, type CacheEntry } from '../../src/proxy/cache/cache-entry.js';

/** A fresh JSON cache entry with `text` as its body (fresh for a minute), as the cache stage would store it. */
export function cacheEntry(text: string): CacheEntry {
  const now = Date.now();
  return {
    id: newEntryId(),
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: Buffer.from(text),
    storedAt: now,
    freshUntil: now + 60_000,
  };
}
