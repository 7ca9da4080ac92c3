import { createHash } from 'node:crypto';
import type { SharedRedis } from '../core/ports/redis.port.js';
import { duplicateConnection } from '../core/redis/redis-connection.js';

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
  close(): Promise<void>;
}

/** Without Redis: this replica polls everything it watches, and hears only its own changes. */
export class LocalWatchFleet implements WatchFleet {
  readonly shared = false;
  constructor(private readonly deliver: (c: WatchChange) => void) {}
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
    // A subscribed connection does nothing else; it queues SUBSCRIBE until connected and resubscribes itself.
    this.sub = duplicateConnection(redis, { enableOfflineQueue: true });
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

  async close(): Promise<void> {
    try {
      await this.sub.quit();
    } catch {
      this.sub.disconnect();
    }
  }
}
