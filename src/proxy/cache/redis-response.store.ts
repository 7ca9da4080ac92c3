import type { SharedRedis } from '../../core/ports/redis.port.js';
import { decodeEntry, encodeEntry, type CacheEntry } from './cache-entry.js';
import type { CacheKey } from './cache-key.js';
import { RedisCacheKeys } from './redis-cache-keys.js';
import { CacheRedis } from './redis-cache-connection.js';
import { RedisHealth } from '../../core/redis/redis-health.js';
import { MemoryResponseStore } from './memory-response.store.js';
import { RedisInvalidation } from './redis-invalidation.js';
import { RedisLeaderElection } from './redis-leader-election.js';
import { purgeEntries } from './redis-purge.js';
import type { MissRole, ResponseStore, StoreStats, WaitResult } from './response-store.js';

export interface RedisStoreOptions {
  /** The cache's own ioredis connection (see cacheConnectionOptions); the store closes it. */
  readonly client: SharedRedis;
  /** `ATRIUM_REDIS_PREFIX`: every key this store writes starts with it. */
  readonly prefix: string;
  /** Timeout of every Redis round trip of the cache. */
  readonly timeoutMs: number;
  /** Lease of the in-flight marker; renewed while the leader's call runs. */
  readonly leaseMs: number;
  /** How long the invalidation index of a scope is kept after its last store (≥ the longest retention). */
  readonly indexTtlMs: number;
  readonly log: (level: 'warn' | 'log', message: string) => void;
  readonly onError: () => void;
  /** How often a down Redis is probed (default 1 s). */
  readonly probeIntervalMs?: number;
  /** Bytes of the in-process LRU that serves while Redis is away (ATRIUM_CACHE_MAX_BYTES). */
  readonly fallbackMaxBytes: number;
}

/** Tokens of misses decided by the in-process fallback carry this mark: their answer is stored there. */
const LOCAL = 'local:';

/**
 * The shared cache of a gateway fleet on one ioredis connection, so one timeout setting
 * (`ATRIUM_CACHE_REDIS_TIMEOUT_MS`) bounds every cache round trip. This class stores and reads entries and
 * wires the parts: key layout (redis-cache-keys.ts), fleet-wide coalescing (redis-leader-election.ts),
 * invalidation after writes (redis-invalidation.ts), operator purges (redis-purge.ts), and whether Redis is
 * usable right now (core/redis/redis-health.ts).
 */
export class RedisResponseStore implements ResponseStore {
  readonly kind = 'redis' as const;
  readonly health: RedisHealth;
  private readonly redis: CacheRedis;
  private readonly keys: RedisCacheKeys;
  private readonly election: RedisLeaderElection;
  private readonly invalidation: RedisInvalidation;
  /** While Redis is away, this process's own LRU; emptied when Redis is back (see `fallBack`). */
  private local: MemoryResponseStore;

  constructor(private readonly opts: RedisStoreOptions) {
    this.keys = new RedisCacheKeys(opts.prefix);
    this.redis = new CacheRedis(opts.client, opts.timeoutMs);
    // Failures are counted where they surface (below); the event would only duplicate them.
    opts.client.on('error', () => undefined);
    this.health = new RedisHealth({
      log: opts.log,
      onError: opts.onError,
      probeIntervalMs: opts.probeIntervalMs ?? 1000,
      probe: async () => {
        await this.redis.ping();
        await this.invalidation.replayPending();
      },
      // Entries kept alone during the outage missed the other replicas' writes: none outlives it.
      onBack: () => this.resetLocal(),
    });
    this.local = new MemoryResponseStore({ maxBytes: opts.fallbackMaxBytes });
    this.invalidation = new RedisInvalidation(this.redis, this.keys, this.health, opts.indexTtlMs);
    this.election = new RedisLeaderElection(this.redis, this.keys, this.health, {
      leaseMs: opts.leaseMs,
      read: (key) => this.get(key),
    });
  }

  /** Waits for the connection up front; a Redis that is down at boot only starts the store in the down state. */
  async connect(): Promise<void> {
    try {
      await this.redis.ready();
    } catch (e) {
      this.health.startDown(e);
    }
  }

  async get(key: CacheKey): Promise<CacheEntry | undefined> {
    if (!this.health.available) return this.local.get(key);
    let raw: string | null;
    try {
      raw = await this.redis.call<string | null>('GET', this.keys.entry(key));
    } catch (e) {
      this.health.failed(e);
      return undefined;
    }
    this.health.succeeded();
    const encoded = typeof raw === 'string' ? unwrap(raw) : undefined;
    return encoded === undefined ? undefined : decodeEntry(encoded);
  }

  async set(
    key: CacheKey,
    entry: CacheEntry,
    retainMs: number,
    token: string | undefined,
    indexed: boolean,
  ): Promise<boolean> {
    if (token?.startsWith(LOCAL))
      return this.local.set(key, entry, retainMs, token.slice(LOCAL.length), indexed);
    if (!this.health.available || token === undefined) return false;
    const full = this.keys.entry(key);
    let stored = false;
    try {
      const value = wrap(encodeEntry(entry), retainMs);
      await (retainMs > 0
        ? this.redis.call('SET', full, value, 'PX', retainMs)
        : this.redis.call('SET', full, value));
      stored = true;
      this.health.succeeded();
      if (!indexed) return true;
      if ((await this.invalidation.index(key)) !== token) {
        // A write to this scope landed while the answer was in flight: it may predate the write.
        await this.redis.call('DEL', full);
        return false;
      }
      return true;
    } catch (e) {
      this.health.failed(e);
      // An entry a write could not find (not indexed, or not checked against a write) must not stay.
      if (stored && indexed) this.redis.call('DEL', full).catch(() => undefined);
      return false;
    }
  }

  async beginMiss(key: CacheKey): Promise<MissRole> {
    if (!this.health.available) return this.fallBack(key);
    return this.election.begin(key);
  }

  /**
   * Redis is away: this process coalesces alone (the stage's in-flight map) and stores in its own LRU, so
   * repeats are still hits; each replica calls the vendor once per key instead of once for the fleet.
   */
  private async fallBack(key: CacheKey): Promise<MissRole> {
    const role = await this.local.beginMiss(key);
    return {
      role: 'local',
      token: role.role === 'local' && role.token !== undefined ? LOCAL + role.token : undefined,
    };
  }

  private resetLocal(): void {
    const old = this.local;
    this.local = new MemoryResponseStore({ maxBytes: this.opts.fallbackMaxBytes });
    void old.close();
  }

  waitFor(
    key: CacheKey,
    holder: string,
    previousId: string | undefined,
    deadline: number,
  ): Promise<WaitResult> {
    return this.election.waitFor(key, holder, previousId, deadline);
  }

  async invalidate(scope: string): Promise<void> {
    await this.local.invalidate(scope);
    await this.invalidation.invalidate(scope);
  }

  async purge(upstream: string, pathPrefix?: string): Promise<number> {
    const local = await this.local.purge(upstream, pathPrefix);
    return local + (await purgeEntries(this.redis, this.keys, upstream, pathPrefix));
  }

  async stats(): Promise<StoreStats> {
    const base = {
      store: 'redis',
      available: this.health.available,
      namespace: this.keys.namespace,
    } as const;
    if (this.health.available) return base;
    const local = await this.local.stats();
    return { ...base, fallback: { entries: local.entries, bytes: local.bytes } };
  }

  async close(): Promise<void> {
    this.health.close();
    await this.local.close();
    await this.redis.close();
  }
}

/** `<expires>|<entry>`: the value format the keyv-based store wrote (expiry in epoch ms, or empty). */
function wrap(encoded: string, retainMs: number): string {
  return `${retainMs > 0 ? Date.now() + retainMs : ''}|${encoded}`;
}

function unwrap(raw: string): string | undefined {
  const bar = raw.indexOf('|');
  if (bar === -1) return undefined;
  // Redis expires the key itself; a value read in the instant of its expiry is still a miss.
  if (bar > 0 && Date.now() > Number(raw.slice(0, bar))) return undefined;
  return raw.slice(bar + 1);
}
