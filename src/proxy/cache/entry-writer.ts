import { Readable } from 'node:stream';
import { GatewayError } from '../../core/errors/gateway-error.js';
import type { ProxyResponse } from '../pipeline.types.js';
import { newEntryId, type CacheEntry } from './cache-entry.js';
import type { CacheKey } from './cache-key.js';
import type { CachedPolicy } from './cache-policy.js';
import { retentionMs, type CacheSettings } from './cache-settings.js';
import type { ResponseStore } from './response-store.js';

/** Where and how one miss's answer is stored. `token`: the store's write-race guard from `beginMiss`. */
export interface EntryTarget {
  readonly store: ResponseStore;
  readonly settings: CacheSettings;
  readonly key: CacheKey;
  readonly policy: CachedPolicy;
  readonly token?: string;
}

/**
 * Stores a 200 answer with the policy's TTL. False when it is not stored: a stream, another status, over the
 * entry size cap, or refused by the store (a write raced the call).
 */
export async function storeAnswer(t: EntryTarget, res: ProxyResponse): Promise<boolean> {
  if (res.body instanceof Readable || res.status !== 200 || res.body.length > t.settings.maxEntryBytes)
    return false;
  const now = Date.now();
  const entry: CacheEntry = {
    id: newEntryId(),
    status: res.status,
    headers: res.headers,
    body: res.body,
    storedAt: now,
    freshUntil: now + t.policy.ttlMs,
  };
  return t.store.set(t.key, entry, retentionMs(t.policy.ttlMs, t.settings), t.token, t.policy.indexed);
}

/** Stores the upstream's own 404 briefly, when a negative TTL is configured. */
export async function storeNotFound(t: EntryTarget, err: unknown): Promise<void> {
  const ttl = t.settings.negativeTtlMs;
  if (ttl <= 0 || !(err instanceof GatewayError) || err.code !== 'NOT_FOUND' || !err.fromUpstream) return;
  const now = Date.now();
  const entry: CacheEntry = {
    id: newEntryId(),
    status: 404,
    headers: {},
    body: Buffer.alloc(0),
    storedAt: now,
    freshUntil: now + ttl,
    negative: {
      code: err.code,
      message: err.message,
      upstream: err.upstream,
      upstreamStatus: err.upstreamStatus,
      upstreamCode: err.upstreamCode,
    },
  };
  await t.store.set(t.key, entry, ttl, t.token, t.policy.indexed);
}
