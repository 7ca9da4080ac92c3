import type { SharedRedis } from '../core/ports/redis.port.js';
import { COUNTER_COUNT, USAGE_COUNTER_NAMES } from './usage-counters.js';

/** Counts of one consumer on one upstream on one UTC day (positions as in USAGE_COUNTERS). */
export interface UsageDelta {
  readonly day: string;
  readonly consumer: string;
  readonly upstream: string;
  readonly counts: Float64Array;
}

/** Where the day totals live: this process, Redis (fleets without a database) or the PostgreSQL ledger. */
export type UsageStoreKind = 'memory' | 'redis' | 'postgres';

/** A report's narrowing (a store may apply it; the recorder applies it anyway). */
export interface UsageFilter {
  readonly consumer?: string;
  readonly upstream?: string;
}

export interface UsageStore {
  readonly kind: UsageStoreKind;
  /**
   * true: deltas that could not be stored stay in the store's own buffer (sent again as they were); false:
   * `add` rejects and the caller keeps them for the next flush.
   */
  readonly buffers?: boolean;
  /** Adds the deltas; rejects when they were not stored. */
  add(deltas: readonly UsageDelta[]): Promise<void>;
  /** Every consumer × upstream with counts on one of these days. */
  read(days: readonly string[], filter?: UsageFilter): Promise<UsageDelta[]>;
}

/** Days kept in memory (bounded: consumers × upstreams × days small arrays). */
export const MEMORY_RETENTION_DAYS = 35;
/** Days a Redis day hash lives after its last write. */
export const REDIS_RETENTION_DAYS = 400;

const SEP = '|';

function addInto(target: Float64Array, from: Float64Array): void {
  for (let i = 0; i < COUNTER_COUNT; i++) target[i] += from[i];
}

export class MemoryUsageStore implements UsageStore {
  readonly kind = 'memory' as const;
  private readonly days = new Map<string, Map<string, UsageDelta>>();

  async add(deltas: readonly UsageDelta[]): Promise<void> {
    this.addNow(deltas);
  }

  /** Synchronous, so a report read right after sees everything counted before it. */
  addNow(deltas: readonly UsageDelta[]): void {
    for (const d of deltas) {
      let day = this.days.get(d.day);
      if (!day) {
        this.days.set(d.day, (day = new Map<string, UsageDelta>()));
        this.prune();
      }
      const key = d.consumer + SEP + d.upstream;
      const cur = day.get(key);
      if (cur) addInto(cur.counts, d.counts);
      else day.set(key, { ...d, counts: Float64Array.from(d.counts) });
    }
  }

  async read(days: readonly string[]): Promise<UsageDelta[]> {
    const out: UsageDelta[] = [];
    for (const day of days) for (const d of this.days.get(day)?.values() ?? []) out.push(d);
    return out;
  }

  private prune(): void {
    if (this.days.size <= MEMORY_RETENTION_DAYS) return;
    const sorted = [...this.days.keys()].sort();
    for (const day of sorted.slice(0, sorted.length - MEMORY_RETENTION_DAYS)) this.days.delete(day);
  }
}

/**
 * One hash per day, `<prefix>usage:<day>`, field `<consumer>|<upstream>|<counter>` (consumer ids and upstream
 * names never hold `|`). A flush is one pipelined round trip of HINCRBYs, whatever the request rate.
 */
export class RedisUsageStore implements UsageStore {
  readonly kind = 'redis' as const;

  constructor(
    private readonly redis: SharedRedis,
    private readonly prefix: string,
  ) {}

  private keyOf(day: string): string {
    return `${this.prefix}usage:${day}`;
  }

  // One pipeline per flush on one server. A Redis Cluster keeps each day hash in its own slot and a pipeline
  // must stay in one: a pipeline per day there (a flush touches one day, two around midnight).
  async add(deltas: readonly UsageDelta[]): Promise<void> {
    if (deltas.length === 0) return;
    const groups = new Map<string, UsageDelta[]>();
    for (const d of deltas) {
      const group = this.redis.isCluster ? d.day : '';
      const list = groups.get(group);
      if (list) list.push(d);
      else groups.set(group, [d]);
    }
    for (const list of groups.values()) await this.addGroup(list);
  }

  private async addGroup(deltas: readonly UsageDelta[]): Promise<void> {
    const p = this.redis.pipeline();
    const keys = new Set<string>();
    for (const d of deltas) {
      const key = this.keyOf(d.day);
      keys.add(key);
      const base = d.consumer + SEP + d.upstream + SEP;
      for (let i = 0; i < COUNTER_COUNT; i++)
        if (d.counts[i] !== 0) p.hincrby(key, base + USAGE_COUNTER_NAMES[i], d.counts[i]);
    }
    for (const key of keys) p.expire(key, REDIS_RETENTION_DAYS * 86_400);
    const results = await p.exec();
    const failed = results?.find(([err]) => err);
    if (!results || failed) throw failed?.[0] ?? new Error('usage flush: no answer from Redis');
  }

  async read(days: readonly string[]): Promise<UsageDelta[]> {
    if (days.length === 0) return [];
    // As above: one pipeline on one server, a read per day hash on a Cluster.
    const results = this.redis.isCluster
      ? await Promise.all(
          days.map((day) =>
            this.redis.hgetall(this.keyOf(day)).then(
              (hash): [Error | null, unknown] => [null, hash],
              (e: Error): [Error | null, unknown] => [e, null],
            ),
          ),
        )
      : ((await days.reduce((p, day) => p.hgetall(this.keyOf(day)), this.redis.pipeline()).exec()) ?? []);
    const out: UsageDelta[] = [];
    days.forEach((day, i) => {
      const [err, hash] = results[i] ?? [new Error('no answer')];
      if (err) throw err;
      const byPair = new Map<string, UsageDelta>();
      for (const [field, value] of Object.entries((hash ?? {}) as Record<string, string>)) {
        const parts = field.split(SEP);
        if (parts.length !== 3) continue;
        const idx = USAGE_COUNTER_NAMES.indexOf(parts[2] as never);
        if (idx === -1) continue;
        const key = parts[0] + SEP + parts[1];
        let d = byPair.get(key);
        if (!d) {
          d = { day, consumer: parts[0], upstream: parts[1], counts: new Float64Array(COUNTER_COUNT) };
          byPair.set(key, d);
        }
        d.counts[idx] = Number(value) || 0;
      }
      out.push(...byPair.values());
    });
    return out;
  }
}
