import { createHash, randomBytes } from 'node:crypto';
import { createKeyv, type RedisClientType } from '@keyv/redis';
import type KeyvRedis from '@keyv/redis';
import { createCache, type Cache } from 'cache-manager';
import type { Keyv } from 'keyv';
import type { ErrorCode } from '../../core/errors/error-codes.js';
import { ERROR_STATUS } from '../../core/errors/error-codes.js';
import { GatewayError } from '../../core/errors/gateway-error.js';
import { decodeEntry, encodeEntry, type CacheEntry } from './cache-entry.js';
import { pathOfKey, type CacheKey } from './cache-key.js';
import { RedisHealth, RedisTimeoutError } from '../../core/redis/redis-health.js';
import type { Lease, MissRole, ResponseStore, StoreStats, WaitResult } from './response-store.js';

export interface RedisStoreOptions {
  readonly url: string;
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
}

/** How long a leader's error stays visible to waiters on other replicas. */
const ERROR_MARKER_MS = 2_000;
/** Scope epochs outlive any in-flight call by far. */
const EPOCH_TTL_MS = 24 * 60 * 60 * 1000;
const POLL_FIRST_MS = 10;
const POLL_MAX_MS = 100;

interface Script {
  readonly lua: string;
  readonly sha: string;
}

function script(lua: string): Script {
  return { lua, sha: createHash('sha1').update(lua).digest('hex') };
}

// The invalidation script computes entry keys from set members, so the store assumes one Redis (not a
// cluster), like the rest of Atrium's shared state.
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
 * Races a Redis round trip against the cache's timeout. When the timer fires, the verdict waits for the
 * check phase of the same loop turn: if the event loop was merely busy, a reply already sitting in the socket
 * is read in the poll phase before it, and counts. Only a reply that truly did not come is a timeout.
 */
function withTimeout<T>(p: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => setImmediate(() => reject(new RedisTimeoutError(ms))), ms);
  });
  return Promise.race([p, timeout]).finally(() => clearTimeout(timer));
}

const GLOB = /[*?[\]\\]/g;

interface ErrorMarker {
  h: string;
  code: ErrorCode;
  message: string;
  upstream?: string;
  upstreamStatus?: number;
  upstreamCode?: string | number;
  retryAfterSeconds?: number;
  fromUpstream?: boolean;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

/**
 * The shared cache of a gateway fleet: entries through cache-manager over keyv/@keyv/redis
 * (`<prefix>cache::<upstream>:<credential>:<family>:<hash>:<path>`); the coordination scripts run on the same
 * connection, so one timeout setting (`ATRIUM_CACHE_REDIS_TIMEOUT_MS`) bounds every cache round trip.
 *
 * Invalidation. Entries of families that have write routes are also listed in a per-scope set
 * (`<prefix>cache-idx:<scope>`, SADD on store); a successful write drops the set's entries and bumps the
 * scope's epoch in one script, so invalidation costs O(entries of that scope) and reads pay nothing. (A
 * generation counter in the key would make reads pay a second round trip for the counter; SCAN would make
 * every write walk the whole keyspace.) A leader takes the epoch with its in-flight marker and checks it after
 * storing: if a write landed meanwhile, it deletes what it stored, so a read that raced a write is never
 * served. Purges by upstream or path prefix (an operator action) SCAN the namespace: the upstream and the
 * path are readable in the key.
 *
 * Coalescing. `SET NX PX` on `<prefix>cache-lock:<scope>:<hash>` elects one leader per key for the fleet; it
 * renews the lease while its call runs, stores the answer, then drops the marker. Followers poll (10 ms,
 * backing off to 100 ms) until the marker is gone, then read the entry; a failing leader leaves a 2 s error
 * marker so they fail at once with its error; a marker that expires (dead leader) lets them contend again.
 */
export class RedisResponseStore implements ResponseStore {
  readonly kind = 'redis' as const;
  readonly health: RedisHealth;
  private readonly keyv: Keyv;
  private readonly adapter: KeyvRedis<string>;
  private readonly cache: Cache;
  private readonly namespace: string;
  private readonly timeoutMs: number;
  /**
   * Scopes whose invalidation could not reach Redis (a write succeeded while it was down or slow). They are
   * invalidated before the store uses Redis again, so entries from before the write are never served.
   */
  private readonly pendingInvalidations = new Set<string>();

  constructor(private readonly opts: RedisStoreOptions) {
    this.namespace = `${opts.prefix}cache`;
    this.timeoutMs = opts.timeoutMs;
    const connectTimeout = Math.max(500, opts.timeoutMs * 4);
    this.keyv = createKeyv(
      {
        url: opts.url,
        // No offline queue: while Redis reconnects, commands fail at once instead of waiting.
        disableOfflineQueue: true,
        socket: {
          connectTimeout,
          reconnectStrategy: (retries: number) => Math.min(100 + retries * 100, 2000),
        },
      },
      {
        namespace: this.namespace,
        throwOnErrors: true,
        throwOnConnectError: true,
        connectionTimeout: connectTimeout,
      },
    );
    this.adapter = this.keyv.store as KeyvRedis<string>;
    // The entry format is ours (cache-entry.ts): keyv only prepends the expiry, no JSON round trip.
    this.keyv.serialize = (data: { value?: unknown; expires?: number }) =>
      `${data.expires ?? ''}|${String(data.value)}`;
    this.keyv.deserialize = ((s: string) => {
      const bar = s.indexOf('|');
      if (bar === -1) return undefined;
      return { value: s.slice(bar + 1), expires: bar > 0 ? Number(s.slice(0, bar)) : undefined };
    }) as Keyv['deserialize'];
    // Failures are counted where they surface (below); the event would only duplicate them.
    this.keyv.on('error', () => undefined);
    this.cache = createCache({ stores: [this.keyv] });
    this.health = new RedisHealth({
      log: opts.log,
      onError: opts.onError,
      probeIntervalMs: opts.probeIntervalMs ?? 1000,
      probe: async () => {
        await withTimeout(this.keyv.get('probe'), connectTimeout);
        for (const scope of [...this.pendingInvalidations]) {
          await this.invalidateNow(scope);
          this.pendingInvalidations.delete(scope);
        }
      },
    });
    // cache-manager turns store errors on reads into misses and reports them here.
    this.cache.on('get', (e: { error?: unknown }) => {
      if (e.error !== undefined) this.health.failed(e.error);
    });
  }

  /** Connects up front; a Redis that is down at boot only starts the store in the down state. */
  async connect(): Promise<void> {
    try {
      await withTimeout(this.keyv.get('probe'), Math.max(500, this.timeoutMs * 4));
    } catch (e) {
      this.health.startDown(e);
    }
  }

  private lockKey(key: CacheKey): string {
    return `${this.opts.prefix}cache-lock:${key.lockId}`;
  }

  private errorKey(key: CacheKey): string {
    return `${this.opts.prefix}cache-err:${key.lockId}`;
  }

  private indexKey(scope: string): string {
    return `${this.opts.prefix}cache-idx:${scope}`;
  }

  private epochKey(scope: string): string {
    return `${this.opts.prefix}cache-epoch:${scope}`;
  }

  /** One raw command on the cache's connection, bounded by the cache timeout. */
  private async command<T>(args: string[]): Promise<T> {
    const client = this.adapter.client as RedisClientType;
    const reply = await withTimeout(client.sendCommand(args), this.timeoutMs);
    return reply as T;
  }

  /** EVALSHA, falling back to EVAL once after a Redis restart forgot the script. */
  private async run<T>(s: Script, keys: string[], args: Array<string | number>): Promise<T> {
    const tail = [String(keys.length), ...keys, ...args.map(String)];
    try {
      return await this.command<T>(['EVALSHA', s.sha, ...tail]);
    } catch (e) {
      if (!(e instanceof Error) || !e.message.startsWith('NOSCRIPT')) throw e;
      return this.command<T>(['EVAL', s.lua, ...tail]);
    }
  }

  async get(key: CacheKey): Promise<CacheEntry | undefined> {
    if (!this.health.available) return undefined;
    let raw: string | undefined;
    try {
      raw = await withTimeout(this.cache.get<string>(key.full), this.timeoutMs);
    } catch (e) {
      this.health.failed(e);
      return undefined;
    }
    this.health.succeeded();
    return typeof raw === 'string' ? decodeEntry(raw) : undefined;
  }

  async set(
    key: CacheKey,
    entry: CacheEntry,
    retainMs: number,
    token: string | undefined,
    indexed: boolean,
  ): Promise<boolean> {
    if (!this.health.available || token === undefined) return false;
    let stored = false;
    try {
      await withTimeout(this.cache.set(key.full, encodeEntry(entry), retainMs), this.timeoutMs);
      stored = true;
      this.health.succeeded();
      if (!indexed) return true;
      const epoch = await this.run<string>(
        SCRIPTS.index,
        [this.indexKey(key.scope), this.epochKey(key.scope)],
        [key.full, this.opts.indexTtlMs],
      );
      if (String(epoch) !== token) {
        // A write to this scope landed while the answer was in flight: it may predate the write.
        await withTimeout(this.cache.del(key.full), this.timeoutMs);
        return false;
      }
      return true;
    } catch (e) {
      this.health.failed(e);
      // An entry a write could not find (not indexed, or not checked against a write) must not stay.
      if (stored && indexed) this.cache.del(key.full).catch(() => undefined);
      return false;
    }
  }

  async beginMiss(key: CacheKey): Promise<MissRole> {
    if (!this.health.available) return { role: 'local', token: undefined };
    const token = randomBytes(8).toString('hex');
    const lock = this.lockKey(key);
    let reply: [number, string, string];
    try {
      reply = await this.run<[number, string, string]>(
        SCRIPTS.acquire,
        [lock, this.epochKey(key.scope)],
        [token, this.opts.leaseMs],
      );
    } catch (e) {
      this.health.failed(e);
      // The marker may have been set after all: take it back so nobody waits a lease out for us.
      this.run(SCRIPTS.release, [lock], [token]).catch(() => undefined);
      return { role: 'local', token: undefined };
    }
    this.health.succeeded();
    const [acquired, holder, epoch] = reply;
    if (Number(acquired) !== 1) return { role: 'follower', holder: String(holder) };
    return { role: 'leader', token: String(epoch), lease: this.lease(key, token) };
  }

  private lease(key: CacheKey, token: string): Lease {
    const lock = this.lockKey(key);
    // Renewed while the call runs, so an expired marker means a dead leader, not a slow upstream.
    const renew = setInterval(
      () => {
        this.run(SCRIPTS.renew, [lock], [token, this.opts.leaseMs]).catch((e: unknown) =>
          this.health.failed(e),
        );
      },
      Math.max(50, Math.floor(this.opts.leaseMs / 3)),
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
      release: () => finish(() => this.run(SCRIPTS.release, [lock], [token])),
      fail: (err: unknown) =>
        finish(() =>
          this.run(
            SCRIPTS.fail,
            [lock, this.errorKey(key)],
            [token, JSON.stringify(errorMarker(token, err)), ERROR_MARKER_MS],
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
    const lock = this.lockKey(key);
    const errKey = this.errorKey(key);
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
        [lockNow, marker] = await this.command<[string | null, string | null]>(['MGET', lock, errKey]);
      } catch (e) {
        this.health.failed(e);
        return { kind: 'retry' };
      }
      if (lockNow === current) continue;
      const entry = await this.get(key);
      if (entry && entry.id !== previousId) return { kind: 'entry', entry };
      if (marker) {
        const error = errorFromMarker(marker, current);
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

  private remember(scope: string): void {
    // Scopes are upstream × credential × family: a handful. The bound only guards against a bug.
    if (this.pendingInvalidations.size < 10_000) this.pendingInvalidations.add(scope);
  }

  private invalidateNow(scope: string): Promise<unknown> {
    return this.run(
      SCRIPTS.invalidate,
      [this.indexKey(scope), this.epochKey(scope)],
      [`${this.namespace}::`, EPOCH_TTL_MS],
    );
  }

  async purge(upstream: string, pathPrefix?: string): Promise<number> {
    const head = `${this.namespace}::`;
    const match = `${head}${upstream}:`.replace(GLOB, (c) => '\\' + c) + '*';
    let purged = 0;
    let cursor = '0';
    do {
      const [next, keys] = await this.command<[string, string[]]>([
        'SCAN',
        cursor,
        'MATCH',
        match,
        'COUNT',
        '1000',
      ]);
      cursor = String(next);
      const doomed =
        pathPrefix === undefined
          ? keys
          : keys.filter((k) => pathOfKey(k.slice(head.length)).startsWith(pathPrefix));
      if (doomed.length > 0) purged += await this.command<number>(['UNLINK', ...doomed]);
    } while (cursor !== '0');
    return purged;
  }

  async stats(): Promise<StoreStats> {
    return { store: 'redis', available: this.health.available, namespace: this.namespace };
  }

  async close(): Promise<void> {
    this.health.close();
    try {
      await this.cache.disconnect();
    } catch {
      // already closed
    }
  }
}

function errorMarker(holder: string, err: unknown): ErrorMarker {
  if (err instanceof GatewayError)
    return {
      h: holder,
      code: err.code,
      message: err.message,
      upstream: err.upstream,
      upstreamStatus: err.upstreamStatus,
      upstreamCode: err.upstreamCode,
      retryAfterSeconds: err.retryAfterSeconds,
      fromUpstream: err.fromUpstream,
    };
  return { h: holder, code: 'INTERNAL', message: 'An internal gateway error occurred.' };
}

/** The leader's error, rebuilt for a waiter on another replica; undefined if the marker is someone else's. */
function errorFromMarker(text: string, holder: string): GatewayError | undefined {
  let m: ErrorMarker;
  try {
    m = JSON.parse(text) as ErrorMarker;
  } catch {
    return undefined;
  }
  if (m.h !== holder || !(m.code in ERROR_STATUS)) return undefined;
  return new GatewayError(m.code, {
    message: m.message,
    upstream: m.upstream,
    upstreamStatus: m.upstreamStatus,
    upstreamCode: m.upstreamCode,
    retryAfterSeconds: m.retryAfterSeconds,
    fromUpstream: m.fromUpstream,
  });
}
