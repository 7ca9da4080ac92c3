import { createHash } from 'node:crypto';
import type { SharedRedis } from '../../core/ports/redis.port.js';
import { RedisTimeoutError } from '../../core/redis/redis-health.js';
import type { ConnectionOverrides } from '../../core/redis/redis-connection.js';

/** A Lua script and its SHA1 (EVALSHA first; EVAL once when Redis forgot it). */
export interface Script {
  readonly lua: string;
  readonly sha: string;
}

export function script(lua: string): Script {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

/**
 * The cache's own connection (a duplicate of the gateway's shared ioredis client): its round trips carry
 * entries of up to megabytes, which must not queue the limiter's and throttler's scripts behind them, and
 * `ATRIUM_CACHE_REDIS_TIMEOUT_MS` bounds them instead of the shared client's timeout.
 */
export function cacheConnectionOptions(timeoutMs: number): ConnectionOverrides {
  return {
    connectTimeout: connectTimeoutOf(timeoutMs),
    // withTimeout below bounds every call (and reads a reply the busy event loop had not picked up yet).
    commandTimeout: undefined,
    // No offline queue: while Redis reconnects, commands fail at once instead of waiting. Nothing sent before
    // a disconnect is sent again after it: a store or invalidation that timed out must not land later.
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    autoResendUnfulfilledCommands: false,
    retryStrategy: (times: number) => Math.min(100 + times * 100, 2000),
  };
}

/** Connecting (and the health probe) may take longer than one command. */
export function connectTimeoutOf(timeoutMs: number): number {
  return Math.max(500, timeoutMs * 4);
}

/**
 * Races a Redis round trip against the cache's timeout. When the timer fires, the verdict waits for the
 * check phase of the same loop turn: if the event loop was merely busy, a reply already sitting in the socket
 * is read in the poll phase before it, and counts. Only a reply that truly did not come is a timeout.
 */
export function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => setImmediate(() => reject(new RedisTimeoutError(ms))), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

/** Every round trip of the cache on its connection, each bounded by the cache's timeout. */
export class CacheRedis {
  constructor(
    readonly client: SharedRedis,
    readonly timeoutMs: number,
  ) {}

  /** One command, bounded. */
  call<T>(command: string, ...args: Array<string | number>): Promise<T> {
    return withTimeout(this.client.call(command, ...args) as Promise<T>, this.timeoutMs);
  }

  /** EVALSHA, falling back to EVAL once after a Redis restart forgot the script. */
  async run<T>(s: Script, keys: readonly string[], args: ReadonlyArray<string | number>): Promise<T> {
    const tail = [keys.length, ...keys, ...args];
    try {
      return await this.call<T>('EVALSHA', s.sha, ...tail);
    } catch (e) {
      if (!(e instanceof Error) || !e.message.startsWith('NOSCRIPT')) throw e;
      return this.call<T>('EVAL', s.lua, ...tail);
    }
  }

  /** Resolves once the connection is ready (at boot), or rejects after the connect timeout. */
  async ready(): Promise<void> {
    const client = this.client;
    if (client.status !== 'ready') {
      let onReady!: () => void;
      const ready = new Promise<void>((resolve) => (onReady = resolve));
      client.once('ready', onReady);
      try {
        await withTimeout(ready, connectTimeoutOf(this.timeoutMs));
      } finally {
        client.off('ready', onReady);
      }
    }
    await this.ping();
  }

  /** A cheap round trip (the health probe), with the connect timeout. */
  async ping(): Promise<void> {
    await withTimeout(this.client.ping(), connectTimeoutOf(this.timeoutMs));
  }

  async close(): Promise<void> {
    try {
      await withTimeout(this.client.quit(), connectTimeoutOf(this.timeoutMs));
    } catch {
      // Not connected, or the goodbye did not come: drop the socket.
      this.client.disconnect();
    }
  }
}
