import { Logger } from '@nestjs/common';
import type { SharedRedis } from '../ports/redis.port.js';
import {
  recordOf,
  type MultiWindowThrottlerStorage,
  type QuotaVerdict,
  type QuotaWindow,
  type QuotaWindowState,
  type ThrottlerStorageRecord,
} from './quota-storage.js';

/**
 * All of a consumer's windows in one EVALSHA: read every window, and only if none is full count the request
 * in all of them. A window is a counter key with a PX expiry set at its first hit (fixed window).
 * Returns {allowed, hits1, pttl1, hits2, pttl2, …}.
 */
export const QUOTA_HIT_LUA = `
local n = #KEYS
local hits = {}
local pttl = {}
local allowed = 1
for i = 1, n do
  local t = redis.call('PTTL', KEYS[i])
  local h = 0
  if t > 0 then
    h = tonumber(redis.call('GET', KEYS[i])) or 0
  else
    t = tonumber(ARGV[2 * i - 1])
  end
  hits[i] = h
  pttl[i] = t
  if h >= tonumber(ARGV[2 * i]) then allowed = 0 end
end
if allowed == 1 then
  for i = 1, n do
    if hits[i] == 0 then
      redis.call('SET', KEYS[i], 1, 'PX', pttl[i])
      hits[i] = 1
    else
      hits[i] = redis.call('INCR', KEYS[i])
    end
  end
end
local out = { allowed }
for i = 1, n do
  out[2 * i] = hits[i]
  out[2 * i + 1] = pttl[i]
end
return out
`;

const COMMAND = 'atriumQuotaHit';

interface Prepared {
  readonly argv: ReadonlyArray<string | number>;
}

type QuotaCommand = Record<typeof COMMAND, (...args: Array<string | number>) => Promise<number[]>>;

/**
 * One count for the whole fleet. Redis down or slow → `undefined` (the guard fails open), counted and
 * logged once per outage: a broken Redis must not stop consumers, and the upstream budget still protects
 * the vendors.
 */
export class RedisFixedWindowThrottlerStorage implements MultiWindowThrottlerStorage {
  private readonly logger = new Logger('ConsumerThrottler');
  private readonly prepared = new WeakMap<readonly string[], Prepared>();
  private failing = false;

  constructor(
    private readonly redis: SharedRedis,
    private readonly prefix: string,
    private readonly onError: () => void = () => undefined,
  ) {
    redis.defineCommand(COMMAND, { lua: QUOTA_HIT_LUA });
  }

  private prepare(keys: readonly string[], windows: readonly QuotaWindow[]): Prepared {
    let p = this.prepared.get(keys);
    if (!p) {
      const argv: Array<string | number> = [keys.length];
      for (const k of keys) argv.push(`${this.prefix}quota:${k}`);
      for (const w of windows) argv.push(w.ttlMs, w.limit);
      p = { argv };
      this.prepared.set(keys, p);
    }
    return p;
  }

  async hitAll(keys: readonly string[], windows: readonly QuotaWindow[]): Promise<QuotaVerdict | undefined> {
    // ioredis would reject at once anyway (no offline queue); checking first spares an exception per request.
    if (this.redis.status !== 'ready') return this.failed(new Error(`Redis is ${this.redis.status}`));
    let out: number[];
    try {
      out = await (this.redis as unknown as QuotaCommand)[COMMAND](...this.prepare(keys, windows).argv);
    } catch (e) {
      return this.failed(e as Error);
    }
    if (this.failing) {
      this.failing = false;
      this.logger.log('Redis answers again: consumer quotas are shared again');
    }
    const states: QuotaWindowState[] = new Array<QuotaWindowState>(windows.length);
    for (let i = 0; i < windows.length; i++)
      states[i] = { hits: Number(out[2 * i + 1]), resetMs: Number(out[2 * i + 2]) };
    return { allowed: out[0] === 1, windows: states };
  }

  async increment(
    key: string,
    ttl: number,
    limit: number,
    _blockDuration: number,
    throttlerName: string,
  ): Promise<ThrottlerStorageRecord> {
    const v = await this.hitAll([`{${key}}:${throttlerName}`], [{ name: throttlerName, ttlMs: ttl, limit }]);
    return v ? recordOf(v) : { totalHits: 0, timeToExpire: 0, isBlocked: false, timeToBlockExpire: 0 };
  }

  private failed(e: Error): undefined {
    this.onError();
    if (!this.failing) {
      this.failing = true;
      this.logger.warn(`Redis unavailable for consumer quotas, failing open: ${e.message}`);
    }
    return undefined;
  }
}
