import { Redis } from 'ioredis';
import { FixedWindowThrottlerStorage } from '../../src/core/throttling/fixed-window.storage.js';
import type { QuotaWindow } from '../../src/core/throttling/quota-storage.js';
import { RedisFixedWindowThrottlerStorage } from '../../src/core/throttling/redis-window.storage.js';
import { createRedisClient } from '../../src/redis/redis.module.js';
import { eventually } from '../helpers/eventually.js';
import { describeRedis } from '../helpers/redis.js';
import { closeRedis, connectedRedis } from '../helpers/redis-clients.js';

const perSecond: QuotaWindow = { name: 'per-second', ttlMs: 1000, limit: 3 };
const perMinute: QuotaWindow = { name: 'per-minute', ttlMs: 60_000, limit: 5 };
const windows = [perSecond, perMinute];
const keys = ['{app}:per-second', '{app}:per-minute'];

describe('fixed-window storage (in memory), fake timers', () => {
  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-11-23T10:00:00Z') }));
  afterEach(() => jest.useRealTimers());

  it('counts up to the limit, then refuses until the window resets', () => {
    const s = new FixedWindowThrottlerStorage();
    const w = [perSecond];
    const k = [keys[0]];
    expect([1, 2, 3].map(() => s.hitAll(k, w).allowed)).toEqual([true, true, true]);
    const refused = s.hitAll(k, w);
    expect(refused.allowed).toBe(false);
    expect(refused.windows[0]).toEqual({ hits: 3, resetMs: 1000 });
    jest.advanceTimersByTime(400);
    expect(s.hitAll(k, w).windows[0].resetMs).toBe(600);
    jest.advanceTimersByTime(600);
    expect(s.hitAll(k, w)).toEqual({ allowed: true, windows: [{ hits: 1, resetMs: 1000 }] });
    s.onApplicationShutdown();
  });

  it('several windows: all or nothing, so a refused request spends no longer-window quota', () => {
    const s = new FixedWindowThrottlerStorage();
    for (let i = 0; i < 3; i++) expect(s.hitAll(keys, windows).allowed).toBe(true);
    // Hammering the per-second window does not burn the per-minute one.
    for (let i = 0; i < 50; i++) expect(s.hitAll(keys, windows).allowed).toBe(false);
    jest.advanceTimersByTime(1000);
    const v = s.hitAll(keys, windows);
    expect(v.allowed).toBe(true);
    expect(v.windows.map((x) => x.hits)).toEqual([1, 4]);
    expect(s.hitAll(keys, windows).allowed).toBe(true); // 5 of 5 per minute
    const full = s.hitAll(keys, windows);
    expect(full.allowed).toBe(false);
    expect(full.windows[1]).toEqual({ hits: 5, resetMs: 59_000 });
    s.onApplicationShutdown();
  });

  it('consumers have separate windows', () => {
    const s = new FixedWindowThrottlerStorage();
    for (let i = 0; i < 3; i++) s.hitAll(['{a}:s'], [perSecond]);
    expect(s.hitAll(['{a}:s'], [perSecond]).allowed).toBe(false);
    expect(s.hitAll(['{b}:s'], [perSecond]).allowed).toBe(true);
    s.onApplicationShutdown();
  });

  it('keeps one small object per window however many hits (O(1)), and sweeps idle ones', () => {
    const s = new FixedWindowThrottlerStorage(undefined, 60_000);
    const big: QuotaWindow = { name: 'm', ttlMs: 60_000, limit: 1_000_000 };
    for (let i = 0; i < 100_000; i++) s.hitAll(['{hot}:m'], [big]);
    expect(s.size).toBe(1);
    expect(s.hitAll(['{hot}:m'], [big]).windows[0].hits).toBe(100_001);
    jest.advanceTimersByTime(60_001);
    expect(s.size).toBe(0);
    s.onApplicationShutdown();
  });

  it('also speaks the stock ThrottlerStorage.increment contract', async () => {
    const s = new FixedWindowThrottlerStorage();
    const r1 = await s.increment('k', 2000, 1, 2000, 'default');
    expect(r1).toEqual({ totalHits: 1, timeToExpire: 2, isBlocked: false, timeToBlockExpire: 0 });
    const r2 = await s.increment('k', 2000, 1, 2000, 'default');
    expect(r2).toEqual({ totalHits: 2, timeToExpire: 2, isBlocked: true, timeToBlockExpire: 2 });
    s.onApplicationShutdown();
  });
});

describeRedis('fixed-window storage (Redis, one EVALSHA for all windows)', ({ prefix, url }) => {
  let a: Redis;
  let b: Redis;
  beforeAll(async () => {
    [a, b] = await Promise.all([connectedRedis(url), connectedRedis(url)]);
  });
  afterAll(() => closeRedis(a, b));

  it('two replicas share one count and refuse exactly past the limit', async () => {
    const errors: number[] = [];
    const s1 = new RedisFixedWindowThrottlerStorage(a, prefix, () => errors.push(1));
    const s2 = new RedisFixedWindowThrottlerStorage(b, prefix, () => errors.push(1));
    const w: QuotaWindow[] = [{ name: 'w', ttlMs: 5000, limit: 10 }];
    const k = ['{shared}:w'];
    const verdicts = await Promise.all(Array.from({ length: 30 }, (_, i) => (i % 2 ? s1 : s2).hitAll(k, w)));
    expect(verdicts.filter((v) => v!.allowed)).toHaveLength(10);
    expect(errors).toHaveLength(0);
    const last = verdicts.find((v) => !v!.allowed)!;
    expect(last.windows[0].hits).toBe(10);
    expect(last.windows[0].resetMs).toBeGreaterThan(4000);
    expect(last.windows[0].resetMs).toBeLessThanOrEqual(5000);
    // Keys carry the prefix and the consumer id in a hash tag, never a key or a hash of one.
    expect(await a.pttl(`${prefix}quota:{shared}:w`)).toBeGreaterThan(0);
  });

  it('several windows, all or nothing, atomically', async () => {
    const s = new RedisFixedWindowThrottlerStorage(a, prefix);
    const k = ['{multi}:per-second', '{multi}:per-minute'];
    const results = [];
    for (let i = 0; i < 10; i++) results.push((await s.hitAll(k, windows))!);
    expect(results.map((r) => r.allowed)).toEqual([true, true, true, ...Array(7).fill(false)]);
    expect(await a.get(`${prefix}quota:{multi}:per-minute`)).toBe('3');
    // Until the one-second window is over: Redis has expired its key.
    await eventually(async () => (await a.exists(`${prefix}quota:{multi}:per-second`)) === 0, {
      what: 'the per-second window to expire',
    });
    const v = (await s.hitAll(k, windows))!;
    expect(v.allowed).toBe(true);
    expect(v.windows.map((x) => x.hits)).toEqual([1, 4]);
  });

  it('Redis down → undefined (fail open), counted', async () => {
    const dead = createRedisClient('redis://127.0.0.1:1');
    dead.on('error', () => undefined);
    let errors = 0;
    try {
      const s = new RedisFixedWindowThrottlerStorage(dead, prefix, () => errors++);
      expect(await s.hitAll(['{x}:w'], [perSecond])).toBeUndefined();
      expect(await s.hitAll(['{x}:w'], [perSecond])).toBeUndefined();
      expect(errors).toBe(2);
    } finally {
      dead.disconnect();
    }
  });
});
