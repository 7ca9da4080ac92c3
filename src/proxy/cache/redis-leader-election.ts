import { randomBytes } from 'node:crypto';
import { GatewayError } from '../../core/errors/gateway-error.js';
import type { CacheEntry } from './cache-entry.js';
import type { CacheKey } from './cache-key.js';
import { decodeErrorMarker, encodeErrorMarker } from './leader-error-marker.js';
import type { RedisCacheKeys } from './redis-cache-keys.js';
import { script, type CacheRedis } from './redis-cache-connection.js';
import type { RedisHealth } from './redis-health.js';
import type { Lease, MissRole, WaitResult } from './response-store.js';

export interface LeaderElectionOptions {
  /** Lease of the in-flight marker; renewed while the leader's call runs. */
  readonly leaseMs: number;
  /** The entry as the store reads it (a waiter's result). */
  readonly read: (key: CacheKey) => Promise<CacheEntry | undefined>;
}

/** How long a leader's error stays visible to waiters on other replicas. */
const ERROR_MARKER_MS = 2_000;
const POLL_FIRST_MS = 10;
const POLL_MAX_MS = 100;

const SCRIPTS = {
  /** KEYS lock, epoch; ARGV token, leaseMs → {acquired, holder, epoch} */
  acquire: script(`if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  return {1, ARGV[1], redis.call('GET', KEYS[2]) or '0'}
end
return {0, redis.call('GET', KEYS[1]) or '', redis.call('GET', KEYS[2]) or '0'}`),
  /** KEYS lock; ARGV token, leaseMs */
  renew:
    script(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
return 0`),
  /** KEYS lock; ARGV token */
  release: script(`if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end
return 0`),
  /** KEYS lock, error; ARGV token, marker, markerMs */
  fail: script(`redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3])
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`),
} as const;

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * Coalescing across the fleet. `SET NX PX` on the key's in-flight marker elects one leader per key; it
 * renews the lease while its call runs, stores the answer, then drops the marker. Followers poll (10 ms,
 * backing off to 100 ms) until the marker is gone, then read the entry; a failing leader leaves a 2 s error
 * marker so they fail at once with its error; a marker that expires (dead leader) lets them contend again.
 * The leader also takes the scope's epoch, which the store checks after storing (see RedisInvalidation).
 */
export class RedisLeaderElection {
  constructor(
    private readonly redis: CacheRedis,
    private readonly keys: RedisCacheKeys,
    private readonly health: RedisHealth,
    private readonly o: LeaderElectionOptions,
  ) {}

  async begin(key: CacheKey): Promise<MissRole> {
    if (!this.health.available) return { role: 'local', token: undefined };
    const token = randomBytes(8).toString('hex');
    const lock = this.keys.lock(key);
    let reply: [number, string, string];
    try {
      reply = await this.redis.run<[number, string, string]>(
        SCRIPTS.acquire,
        [lock, this.keys.epoch(key.scope)],
        [token, this.o.leaseMs],
      );
    } catch (e) {
      this.health.failed(e);
      // The marker may have been set after all: take it back so nobody waits a lease out for us.
      this.redis.run(SCRIPTS.release, [lock], [token]).catch(() => undefined);
      return { role: 'local', token: undefined };
    }
    this.health.succeeded();
    const [acquired, holder, epoch] = reply;
    if (Number(acquired) !== 1) return { role: 'follower', holder: String(holder) };
    return { role: 'leader', token: String(epoch), lease: this.lease(key, token) };
  }

  private lease(key: CacheKey, token: string): Lease {
    const lock = this.keys.lock(key);
    // Renewed while the call runs, so an expired marker means a dead leader, not a slow upstream.
    const renew = setInterval(
      () => {
        this.redis
          .run(SCRIPTS.renew, [lock], [token, this.o.leaseMs])
          .catch((e: unknown) => this.health.failed(e));
      },
      Math.max(50, Math.floor(this.o.leaseMs / 3)),
    );
    renew.unref();
    let done = false;
    const finish = async (action: () => Promise<unknown>): Promise<void> => {
      if (done) return;
      done = true;
      clearInterval(renew);
      try {
        await action();
      } catch (e) {
        this.health.failed(e);
      }
    };
    return {
      release: () => finish(() => this.redis.run(SCRIPTS.release, [lock], [token])),
      fail: (err: unknown) =>
        finish(() =>
          this.redis.run(
            SCRIPTS.fail,
            [lock, this.keys.error(key)],
            [token, encodeErrorMarker(token, err), ERROR_MARKER_MS],
          ),
        ),
    };
  }

  async waitFor(
    key: CacheKey,
    holder: string,
    previousId: string | undefined,
    deadline: number,
  ): Promise<WaitResult> {
    const lock = this.keys.lock(key);
    const errKey = this.keys.error(key);
    let interval = POLL_FIRST_MS;
    let current = holder;
    for (;;) {
      const left = deadline - Date.now();
      if (left <= 0)
        return {
          kind: 'error',
          error: new GatewayError('UPSTREAM_TIMEOUT', {
            upstream: key.upstream,
            message: 'The data service did not answer in time (waited for an identical request in flight).',
          }),
        };
      await sleep(Math.min(interval, left));
      interval = Math.min(POLL_MAX_MS, Math.ceil(interval * 1.5));
      if (!this.health.available) return { kind: 'retry' };
      let lockNow: string | null;
      let marker: string | null;
      try {
        [lockNow, marker] = await this.redis.call<[string | null, string | null]>('MGET', lock, errKey);
      } catch (e) {
        this.health.failed(e);
        return { kind: 'retry' };
      }
      if (lockNow === current) continue;
      const entry = await this.o.read(key);
      if (entry && entry.id !== previousId) return { kind: 'entry', entry };
      if (marker) {
        const error = decodeErrorMarker(marker, current);
        if (error) return { kind: 'error', error };
      }
      if (lockNow) {
        // A new leader took over (the previous one's lease expired): wait for it instead.
        current = lockNow;
        continue;
      }
      return { kind: 'retry' };
    }
  }
}
