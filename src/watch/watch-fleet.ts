import { createHash } from 'node:crypto';
import type { SharedRedis } from '../core/ports/redis.port.js';
import { subscriberConnection } from '../core/redis/redis-connection.js';

/** A change of a watched resource, as one replica tells the others. */
export interface WatchChange {
  /** The resource (canonical path). */
  readonly k: string;
  readonly etag: string;
  /** `WatchAnswer.members`. */
  readonly members: string;
}

/** What the last poll of a resource left for whoever polls next (a replica taking the lease over). */
export interface LastPoll {
  readonly etag: string;
  readonly at: number;
}

/**
 * How replicas share the polling of watched resources: one lease per resource (the holder polls), the last
 * poll's ETag and time, and a channel of changes every replica hears, its own included.
 */
export interface WatchFleet {
  readonly shared: boolean;
  /** Takes the lease, or renews it when this replica holds it; whether it holds it afterwards. */
  claim(resource: string, leaseMs: number): Promise<boolean>;
  /** Gives the lease up (this replica stops watching the resource, or closes). */
  release(resource: string): Promise<void>;
  lastPoll(resource: string): Promise<LastPoll | undefined>;
  recordPoll(resource: string, poll: LastPoll, keepMs: number): Promise<void>;
  publish(change: WatchChange): Promise<void>;
  /**
   * Sets this replica's count of a consumer's watched paths to `held` unless, with what the other live
   * replicas count, it would pass `cap`: then it sets nothing and answers what the others hold. A
   * replica's count lapses `ttlMs` after it was last set (a dead replica's streams stop counting).
   */
  reserve(consumer: string, held: number, cap: number, ttlMs: number): Promise<number | undefined>;
  /** Sets (and so renews) this replica's count of each consumer's paths; 0 removes it. */
  report(counts: ReadonlyMap<string, number>, ttlMs: number): Promise<void>;
  /** Notes the consumers who watch a resource on this replica (each lapses `ttlMs` after it was noted). */
  noteWatchers(resource: string, consumers: readonly string[], ttlMs: number): Promise<void>;
  /** The consumers who watch a resource on any live replica. */
  watchersOf(resource: string, ttlMs: number): Promise<readonly string[]>;
  /**
   * Sets this replica's watched resources as the console lists them (none removes them); they lapse `ttlMs`
   * after they were last set, so a replica that died stops counting.
   */
  reportWatched(rows: readonly WatchedRow[], ttlMs: number): Promise<void>;
  /** What every other live replica last reported of its watched resources. */
  watchedElsewhere(): Promise<readonly (readonly WatchedRow[])[]>;
  close(): Promise<void>;
}

/** One replica's watched resource: subscribers there, fresh polls it heard, when it last heard a change. */
export interface WatchedRow {
  readonly resource: string;
  readonly subscribers: number;
  readonly polls: number;
  /** Epoch ms, 0 when none yet. */
  readonly changedAt: number;
}

const isRow = (v: unknown): v is [string, number, number, number] =>
  Array.isArray(v) &&
  v.length === 4 &&
  typeof v[0] === 'string' &&
  v.slice(1).every((n) => typeof n === 'number' && Number.isFinite(n) && n >= 0);

/**
 * Without Redis: this replica polls everything it watches, and hears only its own changes; the caps and the
 * watchers are this replica's own (WatchService counts them).
 */
export class LocalWatchFleet implements WatchFleet {
  readonly shared = false;
  constructor(private readonly deliver: (c: WatchChange) => void) {}
  reserve(): Promise<number | undefined> {
    return Promise.resolve(undefined);
  }
  report(): Promise<void> {
    return Promise.resolve();
  }
  noteWatchers(): Promise<void> {
    return Promise.resolve();
  }
  watchersOf(): Promise<readonly string[]> {
    return Promise.resolve([]);
  }
  reportWatched(): Promise<void> {
    return Promise.resolve();
  }
  watchedElsewhere(): Promise<readonly (readonly WatchedRow[])[]> {
    return Promise.resolve([]);
  }
  claim(): Promise<boolean> {
    return Promise.resolve(true);
  }
  release(): Promise<void> {
    return Promise.resolve();
  }
  lastPoll(): Promise<LastPoll | undefined> {
    return Promise.resolve(undefined);
  }
  recordPoll(): Promise<void> {
    return Promise.resolve();
  }
  publish(change: WatchChange): Promise<void> {
    this.deliver(change);
    return Promise.resolve();
  }
  close(): Promise<void> {
    return Promise.resolve();
  }
}

// Renew only a lease this replica holds (the value is the replica's id); SET NX PX takes a free one.
const CLAIM = `
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then redis.call('PEXPIRE', KEYS[1], ARGV[2]) return 1 end
if v then return 0 end
redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2])
return 1`;
const RELEASE = `if redis.call('GET', KEYS[1]) == ARGV[1] then return redis.call('DEL', KEYS[1]) end return 0`;

// Times come from Redis (TIME), so replicas' clocks never disagree about what has lapsed.
const NOW = `local t = redis.call('TIME') local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)`;
// A consumer's hash: field = replica id, value = "<paths>:<lapses at>". Lapsed fields are dropped on the way.
const RESERVE = `${NOW}
local all = redis.call('HGETALL', KEYS[1])
local others = 0
for i = 1, #all, 2 do
  if all[i] ~= ARGV[1] then
    local n, at = string.match(all[i + 1], '^(%d+):(%d+)$')
    if n and tonumber(at) > now then others = others + tonumber(n) else redis.call('HDEL', KEYS[1], all[i]) end
  end
end
if others + tonumber(ARGV[2]) > tonumber(ARGV[3]) then return others end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ':' .. (now + tonumber(ARGV[4])))
redis.call('PEXPIRE', KEYS[1], ARGV[4])
return -1`;
const REPORT = `${NOW}
if tonumber(ARGV[2]) <= 0 then redis.call('HDEL', KEYS[1], ARGV[1]) return 0 end
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2] .. ':' .. (now + tonumber(ARGV[3])))
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;
// A resource's watchers: a sorted set of consumer ids scored by when they were last noted.
const NOTE = `${NOW}
for i = 2, #ARGV do redis.call('ZADD', KEYS[1], now, ARGV[i]) end
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[1]))
redis.call('PEXPIRE', KEYS[1], ARGV[1])
return 1`;
const WATCHERS = `${NOW}
return redis.call('ZRANGEBYSCORE', KEYS[1], now - tonumber(ARGV[1]), '+inf')`;
// The fleet's watched resources: one hash, field = replica id, value = "<lapses at>:<rows as JSON>".
const REPORT_WATCHED = `${NOW}
if ARGV[2] == '' then redis.call('HDEL', KEYS[1], ARGV[1]) return 0 end
redis.call('HSET', KEYS[1], ARGV[1], (now + tonumber(ARGV[3])) .. ':' .. ARGV[2])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return 1`;
const WATCHED = `${NOW}
local all = redis.call('HGETALL', KEYS[1])
local out = {}
for i = 1, #all, 2 do
  local at, rows = string.match(all[i + 1], '^(%d+):(.*)$')
  if at and tonumber(at) > now then
    if all[i] ~= ARGV[1] then out[#out + 1] = rows end
  else redis.call('HDEL', KEYS[1], all[i]) end
end
return out`;

/**
 * The fleet through Redis: a lease key per resource (`SET NX PX`, renewed by its holder through a script that
 * checks the holder), the last poll in a key beside it, and changes on one pub/sub channel heard on a
 * subscriber connection of its own. A change message carries the answer, so no replica re-reads it.
 */
export class RedisWatchFleet implements WatchFleet {
  readonly shared = true;
  private readonly channel: string;
  private readonly sub: SharedRedis;

  constructor(
    private readonly redis: SharedRedis,
    private readonly prefix: string,
    private readonly replicaId: string,
    deliver: (c: WatchChange) => void,
    onError: (what: string, e: Error) => void,
  ) {
    this.channel = `${prefix}watch:changes`;
    // A subscribed connection does nothing else: a second one.
    this.sub = subscriberConnection(redis);
    this.sub.on('error', () => undefined); // the shared client's lifecycle logs Redis outages
    this.sub.on('message', (_channel: string, message: string) => {
      let c: WatchChange;
      try {
        c = JSON.parse(message) as WatchChange;
      } catch {
        return;
      }
      if (typeof c.k === 'string' && typeof c.etag === 'string' && typeof c.members === 'string') deliver(c);
    });
    this.sub.on('ready', () => {
      this.sub.subscribe(this.channel).catch((e: Error) => onError('subscribe', e));
    });
  }

  private id(resource: string): string {
    return createHash('sha256').update(resource).digest('base64url').slice(0, 24);
  }

  async claim(resource: string, leaseMs: number): Promise<boolean> {
    const r = await this.redis.eval(
      CLAIM,
      1,
      `${this.prefix}watch:lease:${this.id(resource)}`,
      this.replicaId,
      leaseMs,
    );
    return r === 1;
  }

  async release(resource: string): Promise<void> {
    await this.redis.eval(RELEASE, 1, `${this.prefix}watch:lease:${this.id(resource)}`, this.replicaId);
  }

  async lastPoll(resource: string): Promise<LastPoll | undefined> {
    const v = await this.redis.get(`${this.prefix}watch:last:${this.id(resource)}`);
    if (!v) return undefined;
    try {
      const p = JSON.parse(v) as LastPoll;
      return typeof p.etag === 'string' && typeof p.at === 'number' ? p : undefined;
    } catch {
      return undefined;
    }
  }

  async recordPoll(resource: string, poll: LastPoll, keepMs: number): Promise<void> {
    await this.redis.set(`${this.prefix}watch:last:${this.id(resource)}`, JSON.stringify(poll), 'PX', keepMs);
  }

  async publish(change: WatchChange): Promise<void> {
    await this.redis.publish(this.channel, JSON.stringify(change));
  }

  async reserve(consumer: string, held: number, cap: number, ttlMs: number): Promise<number | undefined> {
    const key = `${this.prefix}watch:consumer:${this.id(consumer)}`;
    const r = Number(await this.redis.eval(RESERVE, 1, key, this.replicaId, held, cap, ttlMs));
    return r >= 0 ? r : undefined;
  }

  async report(counts: ReadonlyMap<string, number>, ttlMs: number): Promise<void> {
    // One key per consumer (a Cluster keeps them on different nodes): no pipeline across them.
    await Promise.all(
      [...counts].map(([consumer, n]) =>
        this.redis.eval(
          REPORT,
          1,
          `${this.prefix}watch:consumer:${this.id(consumer)}`,
          this.replicaId,
          n,
          ttlMs,
        ),
      ),
    );
  }

  async noteWatchers(resource: string, consumers: readonly string[], ttlMs: number): Promise<void> {
    if (consumers.length === 0) return;
    await this.redis.eval(NOTE, 1, `${this.prefix}watch:who:${this.id(resource)}`, ttlMs, ...consumers);
  }

  async watchersOf(resource: string, ttlMs: number): Promise<readonly string[]> {
    const r = await this.redis.eval(WATCHERS, 1, `${this.prefix}watch:who:${this.id(resource)}`, ttlMs);
    return Array.isArray(r) ? r.map(String) : [];
  }

  async reportWatched(rows: readonly WatchedRow[], ttlMs: number): Promise<void> {
    const json = rows.length
      ? JSON.stringify(rows.map((r) => [r.resource, r.subscribers, r.polls, r.changedAt]))
      : '';
    await this.redis.eval(REPORT_WATCHED, 1, `${this.prefix}watch:watched`, this.replicaId, json, ttlMs);
  }

  async watchedElsewhere(): Promise<readonly (readonly WatchedRow[])[]> {
    const r = await this.redis.eval(WATCHED, 1, `${this.prefix}watch:watched`, this.replicaId);
    if (!Array.isArray(r)) return [];
    return r.map((text) => {
      let rows: unknown;
      try {
        rows = JSON.parse(String(text));
      } catch {
        return [];
      }
      return (Array.isArray(rows) ? rows : [])
        .filter(isRow)
        .map(([resource, subscribers, polls, changedAt]) => ({ resource, subscribers, polls, changedAt }));
    });
  }

  async close(): Promise<void> {
    try {
      await this.sub.quit();
    } catch {
      this.sub.disconnect();
    }
  }
}
