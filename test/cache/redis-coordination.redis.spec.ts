import { Redis } from 'ioredis';
import { createServer, type AddressInfo, type Socket } from 'node:net';
import { GatewayError } from '../../src/core/errors/gateway-error.js';
import type { CacheEntry } from '../../src/proxy/cache/cache-entry.js';
import type { CacheKey } from '../../src/proxy/cache/cache-key.js';
import { RedisCacheKeys } from '../../src/proxy/cache/redis-cache-keys.js';
import { CacheRedis, cacheConnectionOptions } from '../../src/proxy/cache/redis-cache-connection.js';
import { RedisHealth } from '../../src/core/redis/redis-health.js';
import { RedisInvalidation } from '../../src/proxy/cache/redis-invalidation.js';
import { RedisLeaderElection } from '../../src/proxy/cache/redis-leader-election.js';
import { RedisResponseStore } from '../../src/proxy/cache/redis-response.store.js';
import { cacheEntry } from '../helpers/cache-entries.js';
import { eventually } from '../helpers/eventually.js';
import { describeRedis } from '../helpers/redis.js';

function keyOf(upstream: string, path: string, hash = 'a'.repeat(32), family = 'f'): CacheKey {
  const scope = `${upstream}:cred:${family}`;
  return { scope, upstream, hash, path, full: `${scope}:${hash}:${path}`, lockId: `${scope}:${hash}` };
}

// The parts of the Redis response store on their own, against the real Redis, each suite under its own prefix.
describeRedis('Redis cache coordination: leader election, invalidation, purge', ({ prefix, url }) => {
  let client: Redis;
  let admin: Redis;
  let health: RedisHealth;
  let redis: CacheRedis;
  let keys: RedisCacheKeys;
  let errors: number;
  const stored = new Map<string, CacheEntry>();

  beforeAll(() => {
    client = new Redis(url, cacheConnectionOptions(1_000));
    admin = new Redis(url);
    redis = new CacheRedis(client, 1_000);
    keys = new RedisCacheKeys(prefix);
  });
  beforeEach(async () => {
    await redis.ready();
    errors = 0;
    stored.clear();
    health = new RedisHealth({
      log: () => undefined,
      onError: () => errors++,
      probe: () => Promise.resolve(),
      probeIntervalMs: 60_000,
    });
  });
  afterEach(async () => {
    health.close();
    const left = await admin.keys(`${prefix}*`);
    if (left.length) await admin.del(...left);
  });
  afterAll(async () => {
    await redis?.close();
    admin?.disconnect();
  });

  const election = (leaseMs = 1_000) =>
    new RedisLeaderElection(redis, keys, health, {
      leaseMs,
      read: (k) => Promise.resolve(stored.get(k.full)),
    });

  describe('leader election', () => {
    it('elects one leader per key; the others follow its token; another key has its own leader', async () => {
      const e = election();
      const k = keyOf('u', '/a');
      const first = await e.begin(k);
      const second = await e.begin(k);
      const other = await e.begin(keyOf('u', '/b', 'b'.repeat(32)));
      expect(first).toMatchObject({ role: 'leader', token: '0' });
      expect(second.role).toBe('follower');
      expect(other.role).toBe('leader');
      expect(await admin.get(keys.lock(k))).toBe(second.role === 'follower' ? second.holder : '');
      if (first.role === 'leader') await first.lease.release();
      if (other.role === 'leader') await other.lease.release();
      expect(await admin.exists(keys.lock(k))).toBe(0);
    });

    it('a follower gets the entry the leader stored once the marker is gone', async () => {
      const e = election();
      const k = keyOf('u', '/a');
      const leader = await e.begin(k);
      const follower = await e.begin(k);
      if (leader.role !== 'leader' || follower.role !== 'follower') throw new Error('roles');
      const waiting = e.waitFor(k, follower.holder, undefined, Date.now() + 10_000);
      const answer = cacheEntry('{"ok":true}');
      stored.set(k.full, answer);
      await leader.lease.release();
      expect(await waiting).toEqual({ kind: 'entry', entry: answer });
    });

    it("a failing leader's error reaches its followers at once, rebuilt as the same gateway error", async () => {
      const e = election();
      const k = keyOf('u', '/a');
      const leader = await e.begin(k);
      const follower = await e.begin(k);
      if (leader.role !== 'leader' || follower.role !== 'follower') throw new Error('roles');
      const waiting = e.waitFor(k, follower.holder, undefined, Date.now() + 10_000);
      await leader.lease.fail(
        new GatewayError('UPSTREAM_ERROR', { upstream: 'u', upstreamStatus: 502, message: 'vendor broke' }),
      );
      const r = await waiting;
      expect(r.kind).toBe('error');
      expect(r.kind === 'error' && r.error).toMatchObject({
        code: 'UPSTREAM_ERROR',
        upstream: 'u',
        upstreamStatus: 502,
        message: 'vendor broke',
      });
      // Anything but a gateway error travels without its details.
      const again = await e.begin(k);
      if (again.role !== 'leader') throw new Error('expected to lead after the failed leader');
      const next = await e.begin(k);
      if (next.role !== 'follower') throw new Error('roles');
      const second = e.waitFor(k, next.holder, undefined, Date.now() + 10_000);
      await again.lease.fail(new Error('secret detail'));
      const r2 = await second;
      expect(r2.kind === 'error' && r2.error).toMatchObject({ code: 'INTERNAL' });
      expect(r2.kind === 'error' && r2.error.message).not.toContain('secret');
    });

    it('the lease is renewed while the leader runs, and a dead leader’s marker expires so others contend', async () => {
      const e = election(300);
      const k = keyOf('u', '/a');
      const leader = await e.begin(k);
      if (leader.role !== 'leader') throw new Error('roles');
      // Renewal: the marker's TTL goes back up to the lease instead of running out. Renewals come every
      // lease / 3 (100 ms), so the TTL sweeps 300 → 200 between them: catch it in the lower part of that sweep
      // (below 200 it only goes when a renewal is late, which a quiet machine rarely shows).
      const low = await eventually(async () => {
        const t = await admin.pttl(keys.lock(k));
        return t > 0 && t < 230 ? t : 0;
      });
      await eventually(async () => (await admin.pttl(keys.lock(k))) > low + 50, { what: 'renewal' });
      await leader.lease.release();

      // A leader that died (a marker nobody renews): waiters see it vanish without a result and contend.
      await admin.set(keys.lock(k), 'dead-leader', 'PX', 200);
      expect(await e.waitFor(k, 'dead-leader', undefined, Date.now() + 10_000)).toEqual({ kind: 'retry' });
      const next = await e.begin(k);
      expect(next.role).toBe('leader');
      if (next.role === 'leader') await next.lease.release();
    });

    it('a follower gives up at its deadline with UPSTREAM_TIMEOUT', async () => {
      const e = election();
      const k = keyOf('u', '/a');
      const leader = await e.begin(k);
      const follower = await e.begin(k);
      if (leader.role !== 'leader' || follower.role !== 'follower') throw new Error('roles');
      const r = await e.waitFor(k, follower.holder, undefined, Date.now() + 80);
      expect(r.kind === 'error' && r.error).toMatchObject({ code: 'UPSTREAM_TIMEOUT', upstream: 'u' });
      await leader.lease.release();
    });

    it('with Redis marked down, every miss is local (no fleet coordination)', async () => {
      health.startDown(new Error('test'));
      expect(await election().begin(keyOf('u', '/a'))).toEqual({ role: 'local', token: undefined });
    });
  });

  describe('invalidation', () => {
    it("drops a scope's indexed entries and bumps its epoch, which the next leader takes", async () => {
      const inv = new RedisInvalidation(redis, keys, health, 60_000);
      const a = keyOf('u', '/a');
      const b = keyOf('u', '/b', 'b'.repeat(32));
      const elsewhere = keyOf('u', '/c', 'c'.repeat(32), 'other');
      for (const k of [a, b, elsewhere]) {
        await admin.set(keys.entry(k), '|x');
        expect(await inv.index(k)).toBe('0');
      }
      await inv.invalidate(a.scope);
      expect(await admin.exists(keys.entry(a), keys.entry(b))).toBe(0);
      expect(await admin.exists(keys.entry(elsewhere))).toBe(1);
      expect(await admin.get(keys.epoch(a.scope))).toBe('1');
      const leader = await election().begin(a);
      expect(leader).toMatchObject({ role: 'leader', token: '1' });
      if (leader.role === 'leader') await leader.lease.release();
    });

    it('an invalidation made while Redis is down is kept and replayed before Redis is used again', async () => {
      const inv = new RedisInvalidation(redis, keys, health, 60_000);
      const a = keyOf('u', '/a');
      await admin.set(keys.entry(a), '|x');
      await inv.index(a);
      health.startDown(new Error('test'));
      await inv.invalidate(a.scope);
      expect(inv.pendingCount).toBe(1);
      expect(await admin.exists(keys.entry(a))).toBe(1);
      await inv.replayPending();
      expect(inv.pendingCount).toBe(0);
      expect(await admin.exists(keys.entry(a))).toBe(0);
    });
  });

  describe('the store over them', () => {
    const store = () =>
      new RedisResponseStore({
        client: client.duplicate(),
        prefix,
        timeoutMs: 1_000,
        leaseMs: 1_000,
        indexTtlMs: 60_000,
        fallbackMaxBytes: 1_000_000,
        log: () => undefined,
        onError: () => errors++,
      });

    it('stores and reads an entry byte for byte, in the keyv-compatible `<expires>|<entry>` format with a TTL', async () => {
      const s = store();
      try {
        await s.connect();
        const k = keyOf('u', '/a');
        const e = { ...cacheEntry('{"n":1}'), body: Buffer.from([0, 255, 10, 13]) };
        expect(await s.set(k, e, 60_000, '0', false)).toBe(true);
        expect(await s.get(k)).toEqual(e);
        const raw = (await admin.get(keys.entry(k)))!;
        expect(raw).toMatch(/^\d{13}\|/);
        expect(Number(raw.slice(0, 13))).toBeGreaterThan(Date.now() + 50_000);
        expect(await admin.pttl(keys.entry(k))).toBeGreaterThan(50_000);
        expect(errors).toBe(0);
      } finally {
        await s.close();
      }
    });

    it('does not keep an indexed entry whose scope was invalidated while its answer was in flight', async () => {
      const s = store();
      try {
        await s.connect();
        const k = keyOf('u', '/a');
        const role = await s.beginMiss(k);
        if (role.role !== 'leader') throw new Error('roles');
        await s.invalidate(k.scope);
        expect(await s.set(k, cacheEntry('old'), 60_000, role.token, true)).toBe(false);
        expect(await s.get(k)).toBeUndefined();
        await role.lease.release();
      } finally {
        await s.close();
      }
    });

    it('purges an upstream by path prefix, leaving other paths and upstreams', async () => {
      const s = store();
      try {
        await s.connect();
        const ks = [
          keyOf('u', '/tables/1', '1'.repeat(32)),
          keyOf('u', '/tables/2', '2'.repeat(32)),
          keyOf('u', '/feeds', '3'.repeat(32)),
          keyOf('u*', '/tables/1', '4'.repeat(32)),
        ];
        for (const k of ks) expect(await s.set(k, cacheEntry(k.path), 60_000, '0', false)).toBe(true);
        expect(await s.purge('u', '/tables')).toBe(2);
        expect(await s.get(ks[0])).toBeUndefined();
        expect(await s.get(ks[2])).toBeDefined();
        expect(await s.get(ks[3])).toBeDefined();
        expect(await s.purge('u*')).toBe(1);
        expect(await s.get(ks[2])).toBeDefined();
      } finally {
        await s.close();
      }
    });

    it('starts in the down state when Redis does not answer at boot, and never throws to its callers', async () => {
      // A server that accepts connections and never answers: Redis stalled at boot.
      const sockets = new Set<Socket>();
      const mute = createServer((c) => sockets.add(c.on('close', () => sockets.delete(c))));
      await new Promise<void>((resolve) => mute.listen(0, '127.0.0.1', resolve));
      const port = (mute.address() as AddressInfo).port;
      const s = new RedisResponseStore({
        client: new Redis(`redis://127.0.0.1:${port}`, cacheConnectionOptions(100)),
        prefix,
        timeoutMs: 100,
        leaseMs: 1_000,
        indexTtlMs: 60_000,
        fallbackMaxBytes: 1_000_000,
        log: () => undefined,
        onError: () => errors++,
        probeIntervalMs: 60_000,
      });
      try {
        await s.connect();
        expect(s.health.available).toBe(false);
        const k = keyOf('u', '/a');
        expect(await s.get(k)).toBeUndefined();
        // Redis away: the in-process LRU decides and keeps the answer (docs/operations.md "Losing Redis").
        const role = await s.beginMiss(k);
        expect(role).toEqual({ role: 'local', token: 'local:0' });
        // A token from Redis (not the fallback's) still stores nothing.
        expect(await s.set(k, cacheEntry('x'), 60_000, '0', false)).toBe(false);
        expect(await s.set(k, cacheEntry('x'), 60_000, 'local:0', false)).toBe(true);
        expect((await s.get(k))?.body.toString()).toBe('x');
        await s.invalidate(k.scope);
        expect(await s.get(k)).toBeUndefined();
        expect(errors).toBe(0);
      } finally {
        await s.close();
        for (const c of sockets) c.destroy();
        await new Promise((resolve) => mute.close(resolve));
      }
    });
  });
});
