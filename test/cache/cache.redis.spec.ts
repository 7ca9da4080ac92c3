import { Redis } from 'ioredis';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { type GatewayHandle, http, withGateway } from '../helpers/gateway.js';
import { describeRedis } from '../helpers/redis.js';
import { burst, sha256Hex } from '../helpers/burst.js';

const UPSTREAM_TOKEN = 'sbx_macro_redis_cache_91ab';
const ADMIN_TOKEN = 'adm_redis_cache_test_token_0042';

describeRedis(
  'response cache shared through Redis (two gateway instances in one process)',
  ({ prefix, url }) => {
    const reader = testConsumer({ id: 'reader', upstreams: new Set(['macro']) });
    const writer = testConsumer({ id: 'writer', upstreams: new Set(['macro']), write: true });
    const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
    const fleet = withGateway({
      upstreams: { macro: { fake, token: UPSTREAM_TOKEN } },
      env: {
        UPSTREAM_MACRO_TIMEOUT_MS: '8000',
        REDIS_URL: url,
        ATRIUM_REDIS_PREFIX: prefix,
        // Coordination, not latency, is under test here (see cache.fleet.spec.ts).
        ATRIUM_CACHE_REDIS_TIMEOUT_MS: '3000',
        ATRIUM_ADMIN_TOKEN: ADMIN_TOKEN,
        ATRIUM_CACHE_STALE_WHILE_REVALIDATE_MS: '0',
        ATRIUM_CACHE_STALE_IF_ERROR_MS: '0',
      },
      consumers: [reader, writer],
      instances: 2,
    });
    let a: GatewayHandle;
    let b: GatewayHandle;
    let redis: Redis;

    beforeAll(() => {
      [a, b] = fleet.gateways;
      redis = new Redis(url);
    });
    afterAll(async () => {
      if (redis) {
        const keys = await redis.keys(`${prefix}*`);
        if (keys.length) await redis.del(...keys);
        redis.disconnect();
      }
    });
    beforeEach(async () => {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
    });

    const bearer = (key = reader.key) => ({ authorization: `Bearer ${key}` });
    const get = (gw: GatewayHandle, path: string, headers: Record<string, string> = bearer()) =>
      http(gw.url + path, { headers });

    it('an entry stored by one instance is a HIT on the other, byte for byte, under the fleet prefix', async () => {
      const miss = await get(a, '/macro/layout/tables/TB1207?lang=en');
      expect(miss.headers['x-cache']).toBe('MISS');
      // Another key position, the same upstream-bound request (the key is what reaches the vendor).
      const hit = await get(b, '/macro/layout/tables/TB1207?lang=en', { 'x-api-key': reader.key });
      expect(hit.headers['x-cache']).toBe('HIT');
      expect(hit.text).toBe(miss.text);
      expect(hit.headers['content-type']).toBe(miss.headers['content-type']);
      expect(fake.requests).toHaveLength(1);
      const keys = await redis.keys(`${prefix}cache::*`);
      expect(keys).toHaveLength(1);
      expect(keys[0]).toMatch(
        new RegExp(
          `^${prefix}cache::\\{macro:token%3A[0-9a-f]{12}:layout\\}:[0-9a-f]{32}:/layout/tables/TB1207$`,
        ),
      );
      expect(keys[0]).not.toContain(reader.key);
      expect(keys[0]).not.toContain(UPSTREAM_TOKEN);
      expect(await redis.get(keys[0])).not.toContain(UPSTREAM_TOKEN);
      expect(Number(await redis.pttl(keys[0]))).toBeGreaterThan(60 * 60 * 1000 - 5_000);
    });

    it('a write on one instance invalidates the other instance’s reads of that family', async () => {
      const list = await get(a, '/macro/feeds?limit=5');
      const id: string = list.json().data[0].id;
      await get(a, `/macro/feeds/${id}`);
      await get(a, '/macro/layout/tables/TB1207');
      expect((await get(b, '/macro/feeds?limit=5')).headers['x-cache']).toBe('HIT');
      expect((await get(b, `/macro/feeds/${id}`)).headers['x-cache']).toBe('HIT');
      const patch = await http(`${a.url}/macro/feeds/${id}`, {
        method: 'PATCH',
        headers: { ...bearer(writer.key), 'content-type': 'application/x-www-form-urlencoded' },
        body: 'name=Changed%20on%20instance%20A',
      });
      expect(patch.status).toBe(200);
      const after = await get(b, '/macro/feeds?limit=5');
      expect(after.headers['x-cache']).toBe('MISS');
      expect(after.text).toContain('Changed on instance A');
      const one = await get(b, `/macro/feeds/${id}`);
      expect(one.headers['x-cache']).toBe('MISS');
      expect(one.text).toContain('Changed on instance A');
      expect((await get(b, '/macro/layout/tables/TB1207')).headers['x-cache']).toBe('HIT');
    });

    it('identical misses on both instances make one upstream call for the fleet', async () => {
      fake.behave({ latencyMs: 1000 });
      const results = await burst([a.url, b.url], '/macro/dictionary/countries', 200, bearer());
      expect(fake.calls('/dictionary/countries')).toBe(1);
      expect(results.every((r) => r.status === 200)).toBe(true);
      expect(new Set(results.map((r) => sha256Hex(r.body))).size).toBe(1);
      expect(results.filter((r) => r.cache === 'MISS')).toHaveLength(1);
    });

    it('a failing leader releases the waiters on the other instance at once, with the same error', async () => {
      fake.behave({ latencyMs: 600, failWith: { status: 500 } });
      const started = Date.now();
      const [onA, onB] = await Promise.all([
        get(a, '/macro/dictionary/units'),
        // B asks once A leads: A's call has reached the fake (which holds it 600 ms).
        eventually(() => fake.calls('/dictionary/units') >= 1, { what: 'A to call the upstream' }).then(() =>
          get(b, '/macro/dictionary/units'),
        ),
      ]);
      expect(fake.calls('/dictionary/units')).toBe(1);
      expect(onA.status).toBe(502);
      expect(onB.status).toBe(502);
      expect(onB.json().error).toMatchObject({
        code: 'UPSTREAM_ERROR',
        upstream: 'macro',
        upstreamStatus: 500,
      });
      expect(onB.json().error.message).toBe(onA.json().error.message);
      // B waited for A's call (600 ms), not for a lease to run out (3 s).
      expect(Date.now() - started).toBeLessThan(2_500);
    });

    it('the admin API purges the shared cache by path prefix for every instance', async () => {
      await get(a, '/macro/feeds?limit=1');
      await get(a, '/macro/feeds?limit=2');
      await get(a, '/macro/layout/tables/TB1207');
      const res = await http(`${b.url}/admin/cache/purge`, {
        method: 'POST',
        headers: { 'x-admin-token': ADMIN_TOKEN },
        body: JSON.stringify({ path: '/macro/feeds' }),
      });
      expect(res.json()).toEqual({ upstream: 'macro', pathPrefix: '/feeds', purged: 2 });
      expect((await get(a, '/macro/feeds?limit=1')).headers['x-cache']).toBe('MISS');
      expect((await get(a, '/macro/layout/tables/TB1207')).headers['x-cache']).toBe('HIT');
    });
  },
);
