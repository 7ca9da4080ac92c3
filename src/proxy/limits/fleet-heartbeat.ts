import { randomBytes } from 'node:crypto';
import type { SharedRedis } from '../../core/ports/redis.port.js';

/**
 * One beat: this replica's mark in the fleet's sorted set (score: Redis's clock, so replicas' clocks never
 * matter), marks older than the window dropped, and the count of replicas alive within it.
 * KEYS: the set. ARGV: replica id, window ms.
 */
const BEAT_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZADD', KEYS[1], now, ARGV[1])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[2]))
redis.call('PEXPIRE', KEYS[1], ARGV[2])
return redis.call('ZCARD', KEYS[1])
`;

export interface FleetHeartbeatOptions {
  /** ATRIUM_REDIS_PREFIX. */
  readonly prefix: string;
  /** Between beats. */
  readonly everyMs: number;
  /** A replica not heard from for this long no longer counts. */
  readonly windowMs: number;
}

/**
 * How many replicas share the fleet's budget, as last seen through Redis: each replica beats every second;
 * while Redis is lost, each spends the budget ÷ the replicas it last saw alive (docs/operations.md "Losing
 * Redis"). Before the first answer the count is unknown (the configured LOCAL_SHARE applies then).
 */
export class FleetHeartbeat {
  readonly id = randomBytes(8).toString('hex');
  /** One key (its own hash tag): a Cluster keeps it in one slot. */
  readonly key: string;
  private seen: number | undefined;
  private timer?: NodeJS.Timeout;

  constructor(
    private readonly redis: SharedRedis,
    private readonly o: FleetHeartbeatOptions,
  ) {
    this.key = `${o.prefix}fleet:{replicas}`;
  }

  /** Replicas alive at the last answered beat (this one included), or undefined before any. */
  get replicasSeen(): number | undefined {
    return this.seen;
  }

  /** This replica's share of the fleet budget while Redis is away; undefined before any beat answered. */
  share(): number | undefined {
    return this.seen ? 1 / this.seen : undefined;
  }

  start(): void {
    void this.beat();
    this.timer = setInterval(() => void this.beat(), this.o.everyMs);
    this.timer.unref();
  }

  async beat(): Promise<void> {
    // Not while reconnecting: the count from before the outage stands (that is its point).
    if (this.redis.status !== 'ready') return;
    try {
      const n = Number(await this.redis.eval(BEAT_LUA, 1, this.key, this.id, this.o.windowMs));
      if (n >= 1) this.seen = n;
    } catch {
      // The count from the last answer stands; the limiter counts and logs Redis errors itself.
    }
  }

  /** Leaves the fleet at once (a clean shutdown), so the others' share grows without waiting the window. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (this.redis.status !== 'ready') return;
    await this.redis.zrem(this.key, this.id).catch(() => undefined);
  }
}
