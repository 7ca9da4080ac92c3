import type { CacheKey } from './cache-key.js';
import type { RedisCacheKeys } from './redis-cache-keys.js';
import { script, type CacheRedis } from './redis-cache-connection.js';
import type { RedisHealth } from '../../core/redis/redis-health.js';

/** Scope epochs outlive any in-flight call by far. */
const EPOCH_TTL_MS = 24 * 60 * 60 * 1000;

const SCRIPTS = {
  /** KEYS index, epoch; ARGV member, indexMs → the scope's epoch now */
  index: script(`redis.call('SADD', KEYS[1], ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return redis.call('GET', KEYS[2]) or '0'`),
  /** KEYS index, epoch; ARGV entry key prefix, epochMs → entries dropped */
  invalidate: script(`local ks = redis.call('SMEMBERS', KEYS[1])
for i = 1, #ks, 500 do
  local batch = {}
  for j = i, math.min(i + 499, #ks) do batch[#batch + 1] = ARGV[1] .. ks[j] end
  redis.call('UNLINK', unpack(batch))
end
redis.call('DEL', KEYS[1])
redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[2])
return #ks`),
} as const;

/**
 * Invalidation after writes. Entries of families that have write routes are listed in a per-scope set (SADD
 * on store); a successful write drops the set's entries and bumps the scope's epoch in one script, so
 * invalidation costs O(entries of that scope) and reads pay nothing. (A generation counter in the key would
 * make reads pay a second round trip for the counter; SCAN would make every write walk the whole keyspace.)
 * A leader takes the epoch with its in-flight marker; `index` answers the epoch after storing, and if a write
 * landed meanwhile the store deletes what it stored, so a read that raced a write is never served.
 *
 * A write that cannot reach Redis leaves its scope pending: Redis is not used for reads again until the
 * health probe replayed it, so entries from before the write are never served.
 */
export class RedisInvalidation {
  private readonly pending = new Set<string>();

  constructor(
    private readonly redis: CacheRedis,
    private readonly keys: RedisCacheKeys,
    private readonly health: RedisHealth,
    /** How long the index of a scope is kept after its last store (≥ the longest retention). */
    private readonly indexTtlMs: number,
  ) {}

  /** Lists a stored entry in its scope's index; returns the scope's epoch now. */
  async index(key: CacheKey): Promise<string> {
    const epoch = await this.redis.run<string>(
      SCRIPTS.index,
      [this.keys.index(key.scope), this.keys.epoch(key.scope)],
      [this.keys.member(key), this.indexTtlMs],
    );
    return String(epoch);
  }

  async invalidate(scope: string): Promise<void> {
    if (!this.health.available) {
      this.remember(scope);
      return;
    }
    try {
      await this.invalidateNow(scope);
    } catch (e) {
      // Reads must not use Redis until this invalidation went through (the probe replays it first).
      this.remember(scope);
      this.health.failed(e, true);
    }
  }

  /** Replays what could not reach Redis; throws (leaving the rest pending) if Redis still fails. */
  async replayPending(): Promise<void> {
    for (const scope of [...this.pending]) {
      await this.invalidateNow(scope);
      this.pending.delete(scope);
    }
  }

  /** Scopes waiting for their invalidation. */
  get pendingCount(): number {
    return this.pending.size;
  }

  private remember(scope: string): void {
    // Scopes are upstream × credential × family: a handful. The bound only guards against a bug.
    if (this.pending.size < 10_000) this.pending.add(scope);
  }

  private invalidateNow(scope: string): Promise<unknown> {
    return this.redis.run(
      SCRIPTS.invalidate,
      [this.keys.index(scope), this.keys.epoch(scope)],
      [this.keys.entryHead, EPOCH_TTL_MS],
    );
  }
}
