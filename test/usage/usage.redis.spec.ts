import { Redis } from 'ioredis';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { http, withGateway } from '../helpers/gateway.js';
import { describeRedis } from '../helpers/redis.js';

const UPSTREAM_TOKEN = 'sbx_macro_usage_redis_77c0';
const ADMIN_TOKEN = 'adm_usage_redis_test_token_0016';

describeRedis('vendor usage shared through Redis (two gateway instances)', ({ prefix, url }) => {
  const alpha = testConsumer({ id: 'alpha', upstreams: new Set(['macro']) });
  const beta = testConsumer({ id: 'beta', upstreams: new Set(['macro']) });
  const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
  const fleet = withGateway({
    upstreams: { macro: { fake, token: UPSTREAM_TOKEN } },
    env: {
      REDIS_URL: url,
      ATRIUM_REDIS_PREFIX: prefix,
      ATRIUM_CACHE_REDIS_TIMEOUT_MS: '3000',
      ATRIUM_OPERATOR_TOKEN: ADMIN_TOKEN,
      UPSTREAM_MACRO_RETRY_ATTEMPTS: '1',
    },
    consumers: [alpha, beta],
    instances: 2,
  });
  afterAll(async () => {
    const redis = new Redis(url);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    redis.disconnect();
  });

  it('one fleet-wide count: calls through either replica add up on both', async () => {
    const [a, b] = fleet.urls;
    let n = 0;
    const call = (base: string, who: 'alpha' | 'beta', path: string) =>
      http(base + path, {
        headers: {
          authorization: `Bearer ${who === 'alpha' ? alpha.key : beta.key}`,
          'x-request-id': `${who}-${++n}`,
        },
      });
    expect((await call(a, 'alpha', '/macro/layout/tables/TB1207')).headers['x-cache']).toBe('MISS');
    expect((await call(b, 'alpha', '/macro/layout/tables/TB1207')).headers['x-cache']).toBe('HIT');
    expect((await call(b, 'beta', '/macro/layout/tables/TB1207?lang=zh')).headers['x-cache']).toBe('MISS');
    expect((await call(a, 'beta', '/macro/layout/tables/TB1207?lang=zh')).headers['x-cache']).toBe('HIT');
    const vendorCalls = (who: string) =>
      fake.requests.filter((r) => String(r.headers['x-request-id']).startsWith(`${who}-`)).length;

    for (const base of [a, b]) {
      // The other replica flushes within a second.
      const rows = await eventually(
        async () => {
          const res = await http(base + '/admin/usage', {
            headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
          });
          const body = res.json();
          return body.rows?.length === 2 && body.totals.requests === 4 ? body.rows : undefined;
        },
        { what: 'both replicas counted' },
      );
      expect(rows).toEqual([
        expect.objectContaining({
          consumer: 'alpha',
          requests: 2,
          cacheAnswers: 1,
          vendorCalls: vendorCalls('alpha'),
        }),
        expect.objectContaining({
          consumer: 'beta',
          requests: 2,
          cacheAnswers: 1,
          vendorCalls: vendorCalls('beta'),
        }),
      ]);
    }
    expect(vendorCalls('alpha') + vendorCalls('beta')).toBe(fake.requests.length);
    expect(fake.requests.length).toBe(2);
  });
});
