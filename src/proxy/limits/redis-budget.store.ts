import type { SharedRedis } from '../../core/ports/redis.port.js';

// The fleet's shared state per upstream, in three keys under one hash tag (one cluster slot):
//   <prefix>limits:{<upstream>}:bucket    hash: tokens, ts (ms), rate (learned), ai (last increase, ms)
//   <prefix>limits:{<upstream>}:cooldown  '1' with PX = the cooldown left (its PTTL is the answer)
//   <prefix>limits:{<upstream>}:streak    consecutive header-less 429s (PX), for the growing default
// Every script reads Redis's own clock (TIME), so replicas' clocks never matter.

const NOW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
`;

/**
 * Take between `min` and `want` tokens, atomically, unless the upstream is cooling down.
 * ARGV: configuredRate, burst, want, min, minRate, maxRate, increasePerSec, lastCallOk (1|0), ttlMs.
 * Returns {granted, waitMs, tokens, rate} or {-1, cooldownMs, tokens, rate}.
 */
export const TAKE_LUA = `${NOW}
local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts', 'rate', 'ai')
local burst = tonumber(ARGV[2])
local minRate = tonumber(ARGV[5])
local maxRate = tonumber(ARGV[6])
local rate = tonumber(b[3]) or tonumber(ARGV[1])
local tokens = tonumber(b[1]) or burst
local ts = tonumber(b[2]) or now
local ai = tonumber(b[4]) or now
local cd = redis.call('PTTL', KEYS[2])
if cd > 0 then
  return { -1, cd, string.format('%.17g', tokens), string.format('%.17g', rate) }
end
-- Additive increase while calls succeed: at most one second's worth per take, none while idle.
if ARGV[8] == '1' and now > ai then
  rate = rate + tonumber(ARGV[7]) * math.min(now - ai, 1000) / 1000
end
if rate < minRate then rate = minRate end
if rate > maxRate then rate = maxRate end
if now > ts then
  tokens = math.min(burst, tokens + (now - ts) * rate / 1000)
  ts = now
end
local want = tonumber(ARGV[3])
local min = tonumber(ARGV[4])
local granted = 0
local wait = 0
if tokens + 1e-9 >= min then
  granted = math.max(min, math.min(want, math.floor(tokens + 1e-9)))
  tokens = math.max(0, tokens - granted)
else
  wait = math.ceil((min - tokens) * 1000 / rate) + (ts - now)
end
redis.call('HSET', KEYS[1], 'tokens', string.format('%.17g', tokens), 'ts', string.format('%.0f', ts),
  'rate', string.format('%.17g', rate), 'ai', string.format('%.0f', math.max(ai, now)))
redis.call('PEXPIRE', KEYS[1], ARGV[9])
return { granted, wait, string.format('%.17g', tokens), string.format('%.17g', rate) }
`;

/**
 * An upstream answered 429: start (or extend) the fleet's cooldown, empty the bucket so that refilling starts
 * when the cooldown ends, lower the learned rate once per cooldown, and tell every replica.
 * ARGV: headerSeconds ('' when the vendor sent none), defaultSeconds, maxSeconds, aimd (1|0), decrease,
 *       minRate, configuredRate, channel, upstream, ttlMs.
 * Returns {cooldownMs, started (1 new, 0 extended, -1 unchanged), rate}.
 */
export const COOLDOWN_LUA = `${NOW}
local cd = redis.call('PTTL', KEYS[2])
local seconds = nil
if ARGV[1] ~= '' then seconds = tonumber(ARGV[1]) end
local rate = tonumber(redis.call('HGET', KEYS[1], 'rate')) or tonumber(ARGV[7])
if cd > 0 then
  -- Another replica's 429 came first: only a later reset from the vendor moves the end.
  if seconds == nil or seconds * 1000 <= cd then
    return { cd, -1, string.format('%.17g', rate) }
  end
  local ms = seconds * 1000
  redis.call('SET', KEYS[2], '1', 'PX', ms)
  redis.call('HSET', KEYS[1], 'tokens', '0', 'ts', string.format('%.0f', now + ms), 'ai', string.format('%.0f', now + ms))
  redis.call('PUBLISH', ARGV[8], ARGV[9] .. ' ' .. ms .. ' ' .. string.format('%.17g', rate))
  return { ms, 0, string.format('%.17g', rate) }
end
if seconds == nil then
  -- No usable header: the configured default, doubling on repeats (a streak outlives its cooldown by as much again).
  local streak = redis.call('INCR', KEYS[3])
  seconds = math.min(tonumber(ARGV[3]), tonumber(ARGV[2]) * 2 ^ (streak - 1))
  redis.call('PEXPIRE', KEYS[3], math.floor(seconds * 2000))
else
  redis.call('DEL', KEYS[3])
end
local ms = math.floor(seconds * 1000)
redis.call('SET', KEYS[2], '1', 'PX', ms)
if ARGV[4] == '1' then rate = math.max(tonumber(ARGV[6]), rate * tonumber(ARGV[5])) end
redis.call('HSET', KEYS[1], 'tokens', '0', 'ts', string.format('%.0f', now + ms),
  'rate', string.format('%.17g', rate), 'ai', string.format('%.0f', now + ms))
redis.call('PEXPIRE', KEYS[1], ARGV[10])
redis.call('PUBLISH', ARGV[8], ARGV[9] .. ' ' .. ms .. ' ' .. string.format('%.17g', rate))
return { ms, 1, string.format('%.17g', rate) }
`;

/**
 * Read-only view for readiness and metrics: tokens now (refill included), learned rate, cooldown left.
 * ARGV: configuredRate, burst. Returns {cooldownMs, tokens, rate}.
 */
export const STATUS_LUA = `${NOW}
local b = redis.call('HMGET', KEYS[1], 'tokens', 'ts', 'rate')
local burst = tonumber(ARGV[2])
local rate = tonumber(b[3]) or tonumber(ARGV[1])
local tokens = tonumber(b[1]) or burst
local ts = tonumber(b[2]) or now
if now > ts then tokens = math.min(burst, tokens + (now - ts) * rate / 1000) end
local cd = redis.call('PTTL', KEYS[2])
if cd < 0 then cd = 0 end
return { cd, string.format('%.17g', tokens), string.format('%.17g', rate) }
`;

/**
 * An operator lifts the cooldown: no cooldown, no streak, the bucket refills from now; every replica is told.
 * ARGV: channel, upstream.
 */
export const LIFT_LUA = `${NOW}
redis.call('DEL', KEYS[2], KEYS[3])
if redis.call('EXISTS', KEYS[1]) == 1 then
  redis.call('HSET', KEYS[1], 'ts', string.format('%.0f', now), 'ai', string.format('%.0f', now))
end
redis.call('PUBLISH', ARGV[1], ARGV[2] .. ' lift')
return 1
`;

export interface SharedTake {
  /** Tokens granted; -1 while the fleet is cooling down. */
  readonly granted: number;
  /** Wait until `min` tokens, or the cooldown left when granted = -1. */
  readonly waitMs: number;
  readonly tokens: number;
  readonly rate: number;
}

export interface SharedCooldown {
  readonly cooldownMs: number;
  /** 1 a new cooldown, 0 an extended one, -1 unchanged. */
  readonly started: number;
  readonly rate: number;
}

export interface SharedStatus {
  readonly cooldownMs: number;
  readonly tokens: number;
  readonly rate: number;
}

export interface SharedBudgetParams {
  readonly configuredRate: number;
  readonly burst: number;
  readonly minRate: number;
  readonly maxRate: number;
  readonly increasePerSec: number;
  readonly aimd: boolean;
  readonly decrease: number;
  readonly cooldownDefaultSeconds: number;
  readonly cooldownMaxSeconds: number;
}

type Reply = Array<number | string>;
interface Commands {
  atriumBudgetTake(...args: Array<string | number>): Promise<Reply>;
  atriumBudgetCooldown(...args: Array<string | number>): Promise<Reply>;
  atriumBudgetStatus(...args: Array<string | number>): Promise<Reply>;
  atriumBudgetLift(...args: Array<string | number>): Promise<number>;
}

// The bucket hash outlives idle periods long enough to keep the learned rate, not forever.
const BUCKET_TTL_MS = 10 * 60_000;

/** The shared token bucket and cooldown of one upstream: one EVALSHA per operation. */
export class RedisBudgetStore {
  private readonly keys: [string, string, string];
  private readonly cmd: Commands;

  constructor(
    readonly redis: SharedRedis,
    prefix: string,
    private readonly upstream: string,
    readonly channel: string,
    private readonly p: SharedBudgetParams,
  ) {
    const base = `${prefix}limits:{${upstream}}:`;
    this.keys = [base + 'bucket', base + 'cooldown', base + 'streak'];
    defineBudgetCommands(redis);
    this.cmd = redis as unknown as Commands;
  }

  get ready(): boolean {
    return this.redis.status === 'ready';
  }

  async take(want: number, min: number, lastOk: boolean): Promise<SharedTake> {
    const r = await this.cmd.atriumBudgetTake(
      2,
      this.keys[0],
      this.keys[1],
      this.p.configuredRate,
      this.p.burst,
      want,
      min,
      this.p.aimd ? this.p.minRate : this.p.configuredRate,
      this.p.aimd ? this.p.maxRate : this.p.configuredRate,
      this.p.increasePerSec,
      this.p.aimd && lastOk ? '1' : '0',
      BUCKET_TTL_MS,
    );
    return { granted: Number(r[0]), waitMs: Number(r[1]), tokens: Number(r[2]), rate: Number(r[3]) };
  }

  async cooldown(headerSeconds: number | undefined): Promise<SharedCooldown> {
    const r = await this.cmd.atriumBudgetCooldown(
      3,
      ...this.keys,
      headerSeconds === undefined ? '' : headerSeconds,
      this.p.cooldownDefaultSeconds,
      this.p.cooldownMaxSeconds,
      this.p.aimd ? '1' : '0',
      this.p.decrease,
      this.p.minRate,
      this.p.configuredRate,
      this.channel,
      this.upstream,
      BUCKET_TTL_MS,
    );
    return { cooldownMs: Number(r[0]), started: Number(r[1]), rate: Number(r[2]) };
  }

  async lift(): Promise<void> {
    await this.cmd.atriumBudgetLift(3, ...this.keys, this.channel, this.upstream);
  }

  async status(): Promise<SharedStatus> {
    const r = await this.cmd.atriumBudgetStatus(
      2,
      this.keys[0],
      this.keys[1],
      this.p.configuredRate,
      this.p.burst,
    );
    return { cooldownMs: Number(r[0]), tokens: Number(r[1]), rate: Number(r[2]) };
  }
}

const defined = new WeakSet<SharedRedis>();

function defineBudgetCommands(redis: SharedRedis): void {
  if (defined.has(redis)) return;
  defined.add(redis);
  redis.defineCommand('atriumBudgetTake', { lua: TAKE_LUA });
  redis.defineCommand('atriumBudgetCooldown', { lua: COOLDOWN_LUA });
  redis.defineCommand('atriumBudgetStatus', { lua: STATUS_LUA });
  redis.defineCommand('atriumBudgetLift', { lua: LIFT_LUA });
}

/** Parses an announcement: `<upstream> <cooldownMs> <rate>`, or `<upstream> lift` (cooldownMs -1). */
export function parseCooldownMessage(
  message: string,
): { upstream: string; cooldownMs: number; rate: number } | undefined {
  const [upstream, ms, rate] = message.split(' ');
  if (upstream && ms === 'lift') return { upstream, cooldownMs: -1, rate: Number.NaN };
  const cooldownMs = Number(ms);
  if (!upstream || !Number.isFinite(cooldownMs)) return undefined;
  return { upstream, cooldownMs, rate: Number(rate) };
}
