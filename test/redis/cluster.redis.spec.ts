import { randomBytes } from 'node:crypto';
import { loadConfig } from '../../src/config/atrium-config.js';
import type { SharedRedis } from '../../src/core/ports/redis.port.js';
import { RedisConsumerRepository } from '../../src/core/auth/redis-consumer.repository.js';
import { duplicateConnection } from '../../src/core/redis/redis-connection.js';
import { RedisFixedWindowThrottlerStorage } from '../../src/core/throttling/redis-window.storage.js';
import type { CacheKey } from '../../src/proxy/cache/cache-key.js';
import { scopeOf } from '../../src/proxy/cache/cache-key.js';
import { cacheConnectionOptions } from '../../src/proxy/cache/redis-cache-connection.js';
import { RedisResponseStore } from '../../src/proxy/cache/redis-response.store.js';
import { parseCooldownMessage, RedisBudgetStore } from '../../src/proxy/limits/redis-budget.store.js';
import { createRedisClient } from '../../src/redis/redis.module.js';
import { USAGE_COUNTER_NAMES } from '../../src/usage/usage-counters.js';
import { RedisUsageStore } from '../../src/usage/usage-store.js';
import { UpstreamLimitsService } from '../../src/proxy/upstream-limits.service.js';
import { UPSTREAMS } from '../../src/upstreams/index.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { burst } from '../helpers/burst.js';
import { testConsumer } from '../helpers/consumers.js';
import { cacheEntry } from '../helpers/cache-entries.js';
import { eventually } from '../helpers/eventually.js';
import { type GatewayHandle, http, withGateway } from '../helpers/gateway.js';
import { describeNeeding } from '../helpers/system-parts.js';
import { RedisCluster, redisCli } from '../helpers/redis-cluster.js';

const BASE = {
  UPSTREAM_MACRO_BASE_URL: 'http://127.0.0.1:9',
  UPSTREAM_MACRO_TOKEN: 'sbx_macro_cluster_01',
  ATRIUM_LINK_SECRET: 'cluster-test-link-secret-0123456789abcdef',
};

function key(upstream: string, credential: string, family: string, hash: string, path: string): CacheKey {
  const scope = scopeOf(upstream, credential, family);
  const lockId = `${scope}:${hash}`;
  return { scope, upstream, hash, path, lockId, full: `${lockId}:${path}` };
}

/**
 * Redis Cluster by configuration (REDIS_CLUSTER_NODES), on a real loopback cluster of three masters and three
 * replicas: every multi-key script, pipeline and channel of the gateway, then two gateways sharing it.
 * A CROSSSLOT error anywhere fails the test: the cluster refuses keys of one operation in different slots.
 */
describeNeeding('redis-server', 'Redis Cluster (3 masters, 3 replicas on loopback)', () => {
  const cluster = new RedisCluster(3);
  const prefix = `atrium-cluster:${randomBytes(4).toString('hex')}:`;
  const clients: SharedRedis[] = [];
  let redis: SharedRedis;

  const client = (): SharedRedis => {
    const c = createRedisClient(
      loadConfig({ ...BASE, REDIS_CLUSTER_NODES: cluster.nodeList }, UPSTREAMS).redis!,
    );
    c.on('error', () => undefined);
    clients.push(c);
    return c;
  };
  const ready = (c: SharedRedis) =>
    eventually(() => c.status === 'ready', { timeoutMs: 10_000, what: 'the cluster client is ready' });

  beforeAll(async () => {
    await cluster.start();
    redis = client();
    await ready(redis);
  }, 60_000);
  afterAll(async () => {
    for (const c of clients) c.disconnect();
    await cluster.stop();
  });

  it('reads REDIS_CLUSTER_NODES with the servers auth and TLS settings, and refuses a mix', () => {
    const c = loadConfig(
      {
        ...BASE,
        REDIS_CLUSTER_NODES: '10.0.0.1:7000, redis-1.internal:7001',
        REDIS_USERNAME: 'atrium',
        REDIS_PASSWORD: 'cluster-test-password-77',
        REDIS_TLS: 'on',
      },
      UPSTREAMS,
    );
    expect(c.redis).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '10.0.0.1', port: 7000 },
        { host: 'redis-1.internal', port: 7001 },
      ],
      username: 'atrium',
      password: 'cluster-test-password-77',
      tls: true,
      commandTimeoutMs: 100,
    });
    expect(() => loadConfig({ ...BASE, REDIS_CLUSTER_NODES: 'nope' }, UPSTREAMS)).toThrow(
      /REDIS_CLUSTER_NODES \(expected host:port/,
    );
    expect(() =>
      loadConfig({ ...BASE, REDIS_CLUSTER_NODES: '127.0.0.1:7000', REDIS_URL: 'redis://x:6379' }, UPSTREAMS),
    ).toThrow(/set either REDIS_URL or REDIS_CLUSTER_NODES/);
    const { ATRIUM_LINK_SECRET: _omitted, ...noLink } = BASE;
    expect(() => loadConfig({ ...noLink, REDIS_CLUSTER_NODES: '127.0.0.1:7000' }, UPSTREAMS)).toThrow(
      /ATRIUM_LINK_SECRET/,
    );
  });

  it('the client is a cluster client with the short command timeout on every node', async () => {
    expect(redis.isCluster).toBe(true);
    expect(
      (redis as unknown as { options: { redisOptions: { commandTimeout: number } } }).options.redisOptions
        .commandTimeout,
    ).toBe(100);
    // Keys spread over the three masters: the client follows the slots. A SET is tried again when it outlasts
    // the 100 ms bound asserted above: a loaded machine (CI runs suites side by side) can hold this test
    // process that long, and what is checked here is where the keys land.
    const set = async (key: string, value: string): Promise<void> => {
      for (let attempt = 1; ; attempt++) {
        try {
          await redis.set(key, value);
          return;
        } catch (e) {
          if (attempt >= 5 || !/timed out/i.test((e as Error).message)) throw e;
        }
      }
    };
    for (let i = 0; i < 30; i++) await set(`${prefix}spread:${i}`, String(i));
    const counts = await Promise.all(
      (await cluster.currentMasters()).map(async (m) => Number(await redisCli(m.port, 'dbsize'))),
    );
    expect(counts).toHaveLength(3);
    expect(counts.every((n) => n > 0)).toBe(true);
  });

  it('the fleet budget (take, cooldown, status, lift) runs its scripts and announces cooldowns to subscribers', async () => {
    const channel = `${prefix}limits:changed`;
    const sub = duplicateConnection(redis, { enableOfflineQueue: true });
    clients.push(sub);
    sub.on('error', () => undefined);
    const messages: string[] = [];
    sub.on('message', (_c: string, m: string) => messages.push(m));
    await sub.subscribe(channel);
    const params = {
      configuredRate: 5,
      burst: 3,
      minRate: 1,
      maxRate: 10,
      increasePerSec: 1,
      aimd: true,
      decrease: 0.5,
      cooldownDefaultSeconds: 2,
      cooldownMaxSeconds: 60,
    };
    for (const upstream of ['macro', 'company', 'documents']) {
      const store = new RedisBudgetStore(redis, prefix, upstream, channel, params);
      const first = await store.take(2, 1, true);
      expect(first.granted).toBe(2);
      const second = await store.take(5, 1, true);
      expect(second.granted).toBe(1);
      const cd = await store.cooldown(undefined);
      expect(cd.started).toBe(1);
      expect(cd.cooldownMs).toBe(2000);
      expect((await store.take(1, 1, true)).granted).toBe(-1);
      expect((await store.status()).cooldownMs).toBeGreaterThan(0);
      await store.lift();
      expect((await store.status()).cooldownMs).toBe(0);
    }
    await eventually(() => messages.length >= 6, { what: 'three cooldowns and three lifts announced' });
    const parsed = messages.map((m) => parseCooldownMessage(m)!);
    // Published on three shards: the cluster bus may deliver them in another order.
    expect(
      parsed
        .filter((m) => m.cooldownMs === 2000)
        .map((m) => m.upstream)
        .sort(),
    ).toEqual(['company', 'documents', 'macro']);
    expect(parsed.filter((m) => m.cooldownMs === -1)).toHaveLength(3);
  });

  it('consumer quotas count every window of a consumer in one script', async () => {
    const storage = new RedisFixedWindowThrottlerStorage(redis, prefix);
    const windows = [
      { name: 'second', ttlMs: 60_000, limit: 2 },
      { name: 'day', ttlMs: 600_000, limit: 100 },
    ];
    for (const id of ['alpha', 'beta', 'gamma', 'delta']) {
      const keys = windows.map((w) => `{${id}}:${w.name}`);
      expect((await storage.hitAll(keys, windows))?.allowed).toBe(true);
      expect((await storage.hitAll(keys, windows))?.allowed).toBe(true);
      const third = await storage.hitAll(keys, windows);
      expect(third?.allowed).toBe(false);
      expect(third?.windows.map((w) => w.hits)).toEqual([2, 2]);
    }
  });

  it('consumers kept in Redis (no database): seed, compare-and-set writes and the change channel', async () => {
    const repo = new RedisConsumerRepository(redis, prefix);
    expect(repo.hashKey).toBe(`${prefix}{consumers}`);
    const sub = duplicateConnection(redis, { enableOfflineQueue: true });
    clients.push(sub);
    sub.on('error', () => undefined);
    const versions: string[] = [];
    sub.on('message', (_c: string, m: string) => versions.push(m));
    await sub.subscribe(repo.channel);
    const a = testConsumer({ id: 'cluster-a' }).consumer;
    const record = (id: string) => ({ id, keys: [{ hash: a.keyHashes[0] }], upstreams: ['macro'] });
    expect(await repo.seed([record('cluster-a') as never])).toBe(true);
    expect(await repo.seed([record('cluster-x') as never])).toBe(false);
    expect(await repo.write(1, 'cluster-b', record('cluster-b') as never)).toBe(2);
    expect(await repo.write(1, 'cluster-c', record('cluster-c') as never)).toBeNull();
    const snap = await repo.snapshot();
    expect(snap.version).toBe(2);
    expect(snap.values.map((v) => (JSON.parse(v) as { id: string }).id).sort()).toEqual([
      'cluster-a',
      'cluster-b',
    ]);
    await eventually(() => versions.includes('2'), { what: 'version 2 announced' });
  });

  it('usage day hashes: a flush across two days and a report across them', async () => {
    const store = new RedisUsageStore(redis, prefix);
    const counts = () => {
      const c = new Float64Array(USAGE_COUNTER_NAMES.length);
      c[0] = 3;
      return c;
    };
    await store.add([
      { day: '2026-11-27', consumer: 'c1', upstream: 'macro', counts: counts() },
      { day: '2026-11-28', consumer: 'c1', upstream: 'macro', counts: counts() },
      { day: '2026-11-28', consumer: 'c2', upstream: 'deals', counts: counts() },
    ]);
    const read = await store.read(['2026-11-26', '2026-11-27', '2026-11-28']);
    expect(read.map((d) => `${d.day} ${d.consumer} ${d.upstream} ${d.counts[0]}`).sort()).toEqual([
      '2026-11-27 c1 macro 3',
      '2026-11-28 c1 macro 3',
      '2026-11-28 c2 deals 3',
    ]);
  });

  describe('the response cache on its own cluster connection', () => {
    const stores: RedisResponseStore[] = [];
    const store = async (): Promise<RedisResponseStore> => {
      const s = new RedisResponseStore({
        client: duplicateConnection(redis, cacheConnectionOptions(2000)),
        prefix,
        timeoutMs: 2000,
        leaseMs: 5000,
        indexTtlMs: 600_000,
        log: () => undefined,
        onError: () => undefined,
        fallbackMaxBytes: 1_000_000,
      });
      stores.push(s);
      await s.connect();
      return s;
    };
    afterAll(async () => {
      for (const s of stores) await s.close();
    });

    it('elects one leader per key across replicas, hands its entry to a follower, drops a failed leader', async () => {
      const [a, b] = [await store(), await store()];
      expect(a.health.available).toBe(true);
      for (const family of ['layout', 'feeds', 'series', 'dictionary']) {
        const k = key('macro', 'token:abc', family, randomBytes(16).toString('hex'), `/${family}/1`);
        const lead = await a.beginMiss(k);
        expect(lead.role).toBe('leader');
        const follow = await b.beginMiss(k);
        expect(follow.role).toBe('follower');
        if (lead.role !== 'leader' || follow.role !== 'follower') return;
        const waiting = b.waitFor(k, follow.holder, undefined, Date.now() + 5000);
        expect(await a.set(k, cacheEntry(`{"family":"${family}"}`), 60_000, lead.token, true)).toBe(true);
        await lead.lease.release();
        const got = await waiting;
        expect(got.kind).toBe('entry');
        if (got.kind === 'entry') expect(got.entry.body.toString()).toBe(`{"family":"${family}"}`);
        // A failing leader leaves its error for the waiters (lock and error marker in one script).
        const k2 = key('macro', 'token:abc', family, randomBytes(16).toString('hex'), `/${family}/2`);
        const lead2 = await a.beginMiss(k2);
        const follow2 = await b.beginMiss(k2);
        if (lead2.role !== 'leader' || follow2.role !== 'follower') throw new Error('roles');
        const waiting2 = b.waitFor(k2, follow2.holder, undefined, Date.now() + 5000);
        await lead2.lease.fail(new Error('vendor down'));
        expect((await waiting2).kind).toBe('error');
      }
    });

    it('a write invalidates its scope (index, epoch and entries in one script); purges visit every master', async () => {
      const s = await store();
      const scopes = ['alpha', 'beta', 'gamma', 'delta', 'epsilon'];
      const keys = scopes.map((cred) =>
        key('macro', `token:${cred}`, 'feeds', randomBytes(16).toString('hex'), '/purge/me'),
      );
      for (const k of keys) {
        const role = await s.beginMiss(k);
        if (role.role !== 'leader') throw new Error('expected to lead');
        expect(await s.set(k, cacheEntry('{"n":1}'), 60_000, role.token, true)).toBe(true);
        await role.lease.release();
        expect(await s.get(k)).toBeDefined();
      }
      const owners = new Set(
        await Promise.all(keys.map(async (k) => (await cluster.masterOf(`{${k.scope}}`)).port)),
      );
      expect(owners.size).toBeGreaterThan(1);
      await s.invalidate(keys[0].scope);
      expect(await s.get(keys[0])).toBeUndefined();
      expect(await s.get(keys[1])).toBeDefined();
      expect(s.health.available).toBe(true);
      const extra = key('deals', 'token:alpha', 'deals', randomBytes(16).toString('hex'), '/deals/7');
      const role = await s.beginMiss(extra);
      if (role.role !== 'leader') throw new Error('expected to lead');
      await s.set(extra, cacheEntry('{}'), 60_000, role.token, false);
      await role.lease.release();
      // By path prefix: the entries of the earlier test (other paths) stay.
      expect(await s.purge('macro', '/purge')).toBe(scopes.length - 1);
      for (const k of keys) expect(await s.get(k)).toBeUndefined();
      expect(await s.get(extra)).toBeDefined();
    });
  });

  describe('two gateways sharing the cluster', () => {
    const UPSTREAM_TOKEN = 'sbx_macro_cluster_gw_11';
    const ADMIN_TOKEN = 'adm_cluster_gateway_token_0042';
    const reader = testConsumer({ id: 'reader', upstreams: new Set(['macro']) });
    const writer = testConsumer({ id: 'writer', upstreams: new Set(['macro']), write: true });
    const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
    const fleet = withGateway({
      upstreams: { macro: { fake, token: UPSTREAM_TOKEN } },
      env: () => ({
        UPSTREAM_MACRO_TIMEOUT_MS: '8000',
        REDIS_CLUSTER_NODES: cluster.nodeList,
        ATRIUM_LINK_SECRET: BASE.ATRIUM_LINK_SECRET,
        ATRIUM_REDIS_PREFIX: `${prefix}gw:`,
        ATRIUM_CACHE_REDIS_TIMEOUT_MS: '3000',
        ATRIUM_REDIS_COMMAND_TIMEOUT_MS: '1000',
        ATRIUM_ADMIN_TOKEN: ADMIN_TOKEN,
        ATRIUM_CACHE_STALE_WHILE_REVALIDATE_MS: '0',
        ATRIUM_CACHE_STALE_IF_ERROR_MS: '0',
        UPSTREAM_MACRO_RATE_PER_SEC: '5',
        UPSTREAM_MACRO_BURST: '5',
      }),
      consumers: [reader, writer],
      instances: 2,
    });
    let a: GatewayHandle;
    let b: GatewayHandle;
    beforeAll(() => {
      [a, b] = fleet.gateways;
    });
    const bearer = (k = reader.key) => ({ authorization: `Bearer ${k}` });

    it('shares cache entries, coalesces misses, invalidates after writes', async () => {
      const miss = await http(`${a.url}/macro/layout/tables/TB1207?lang=en`, { headers: bearer() });
      expect(miss.headers['x-cache']).toBe('MISS');
      const hit = await http(`${b.url}/macro/layout/tables/TB1207?lang=en`, { headers: bearer() });
      expect(hit.headers['x-cache']).toBe('HIT');
      expect(hit.text).toBe(miss.text);

      fake.behave({ latencyMs: 800 });
      const results = await burst([a.url, b.url], '/macro/dictionary/countries', 40, bearer());
      expect(results.every((r) => r.status === 200)).toBe(true);
      expect(fake.calls('/dictionary/countries')).toBe(1);
      fake.behave({});

      const list = await http(`${a.url}/macro/feeds?limit=5`, { headers: bearer() });
      const id: string = list.json().data[0].id;
      expect((await http(`${b.url}/macro/feeds?limit=5`, { headers: bearer() })).headers['x-cache']).toBe(
        'HIT',
      );
      const patch = await http(`${a.url}/macro/feeds/${id}`, {
        method: 'PATCH',
        headers: { ...bearer(writer.key), 'content-type': 'application/x-www-form-urlencoded' },
        body: 'name=Changed%20on%20the%20cluster',
      });
      expect(patch.status).toBe(200);
      const after = await http(`${b.url}/macro/feeds?limit=5`, { headers: bearer() });
      expect(after.headers['x-cache']).toBe('MISS');
      expect(after.text).toContain('Changed on the cluster');
    });

    it('one budget, cooldowns over the cluster channel, and a lift that reaches both', async () => {
      const macro = async (gw: GatewayHandle) =>
        (await http(gw.url + '/health/ready'))
          .json()
          .upstreams.find((u: { name: string }) => u.name === 'macro');
      for (const gw of [a, b]) {
        await eventually(async () => (await macro(gw)).budget === 'shared', { what: 'a shared budget' });
        // The heartbeat script runs on the cluster: each sees both replicas.
        await eventually(async () => (await macro(gw)).fallbackShare === 0.5, { what: 'two replicas seen' });
      }
      let n = 3_000_000;
      const get = (gw: GatewayHandle) => http(`${gw.url}/macro/series/${n++}`, { headers: bearer() });
      // Driven together for 2 s: one bucket (5/s, burst 5) allows about 15 calls, two would allow 30.
      fake.reset();
      const t0 = Date.now();
      const end = t0 + 2000;
      await Promise.all(
        Array.from({ length: 6 }, async (_, i) => {
          while (Date.now() < end) await get(i % 2 ? a : b);
        }),
      );
      const calls = fake.requests.filter((r) => r.at >= t0 && r.at <= end).length;
      expect(calls).toBeLessThanOrEqual(5 * 2 + 5 + 1);
      expect(calls).toBeGreaterThanOrEqual(5);

      await eventually(async () => (await macro(a)).bucket.tokens >= 1, { what: 'a token' });
      fake.reset();
      fake.behave({ rateLimit: { afterCalls: 0, retryAfterSeconds: 4 } });
      expect((await get(a)).status).toBe(429);
      await eventually(async () => (await macro(b)).cooldownRemainingSeconds > 0, {
        what: 'the cooldown to reach replica b',
      });
      const seen = fake.requests.length;
      expect((await get(b)).status).toBe(429);
      expect(fake.requests.length).toBe(seen);
      fake.reset();
      await a.app.get(UpstreamLimitsService).limiter('macro')!.liftCooldown();
      await eventually(async () => (await macro(b)).cooldownRemainingSeconds === 0, {
        what: 'the lift to reach replica b',
      });
      await eventually(async () => (await get(b)).status === 200, { what: 'a 200 after the lift' });
    });
  });
});
