import type { SharedRedis } from '../ports/redis.port.js';
import type { ConsumerRecord } from './consumer-record.js';

/** The whole set as Redis holds it, and its version (0: never written). */
export interface ConsumerSnapshot {
  readonly version: number;
  /** Raw JSON values, one per consumer, validated by the caller. */
  readonly values: readonly string[];
}

// Version and values read together, so a replica never pairs one version with another's contents.
const SNAPSHOT_LUA = `
return {redis.call('GET', KEYS[2]) or '0', redis.call('HVALS', KEYS[1])}`;

// Seeds only a store that was never written: two replicas booting at once seed it once.
const SEED_LUA = `
if redis.call('EXISTS', KEYS[2]) == 1 then return 0 end
for i = 1, #ARGV, 2 do redis.call('HSET', KEYS[1], ARGV[i], ARGV[i + 1]) end
redis.call('SET', KEYS[2], 1)
redis.call('PUBLISH', KEYS[3], '1')
return 1`;

// Compare-and-set on the version: a write computed from an older set is refused (the caller re-reads).
// ARGV: expected version, consumer id, JSON value ('' deletes).
const WRITE_LUA = `
if (redis.call('GET', KEYS[2]) or '0') ~= ARGV[1] then return -1 end
if ARGV[3] == '' then redis.call('HDEL', KEYS[1], ARGV[2]) else redis.call('HSET', KEYS[1], ARGV[2], ARGV[3]) end
local v = redis.call('INCR', KEYS[2])
redis.call('PUBLISH', KEYS[3], tostring(v))
return v`;

/**
 * Consumers in Redis: one hash (`<prefix>consumers`, `<prefix>{consumers}` on a Cluster; id → JSON record with key digests only), a version
 * counter bumped by every change, and a pub/sub channel that announces each new version to the fleet.
 */
export class RedisConsumerRepository {
  readonly hashKey: string;
  readonly versionKey: string;
  readonly channel: string;

  constructor(
    private readonly redis: SharedRedis,
    prefix: string,
  ) {
    // A Cluster needs the three under one hash tag (the scripts touch them together). Cluster is new, so no
    // set is stored under the untagged names there; a single server keeps the names its data already has.
    const base = redis.isCluster ? `${prefix}{consumers}` : `${prefix}consumers`;
    this.hashKey = base;
    this.versionKey = `${base}:version`;
    this.channel = `${base}:changed`;
  }

  private keys(): [number, string, string, string] {
    return [3, this.hashKey, this.versionKey, this.channel];
  }

  async snapshot(): Promise<ConsumerSnapshot> {
    const [version, values] = (await this.redis.eval(SNAPSHOT_LUA, ...this.keys())) as [string, string[]];
    return { version: Number(version), values };
  }

  async version(): Promise<number> {
    return Number((await this.redis.get(this.versionKey)) ?? 0);
  }

  /** Writes `records` when the store was never written; false when it already holds a set. */
  async seed(records: readonly ConsumerRecord[]): Promise<boolean> {
    const args = records.flatMap((r) => [r.id, JSON.stringify(r)]);
    return (await this.redis.eval(SEED_LUA, ...this.keys(), ...args)) === 1;
  }

  /** Upserts (record) or deletes (null) one consumer; the new version, or null when `expected` is stale. */
  async write(expected: number, id: string, record: ConsumerRecord | null): Promise<number | null> {
    const value = record === null ? '' : JSON.stringify(record);
    const v = (await this.redis.eval(WRITE_LUA, ...this.keys(), String(expected), id, value)) as number;
    return v < 0 ? null : v;
  }
}
