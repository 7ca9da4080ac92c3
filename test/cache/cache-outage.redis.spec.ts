import type { Registry } from 'prom-client';
import { METRICS_REGISTRY } from '../../src/core/ports/metrics.port.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, withGateway } from '../helpers/gateway.js';
import { describeNeeding } from '../helpers/system-parts.js';
import { eventually } from '../helpers/eventually.js';
import { RedisServer } from '../helpers/redis-server.js';

const UPSTREAM_TOKEN = 'sbx_macro_outage_cache_77d2';

// The suite runs (and kills) a redis-server of its own: it needs the binary, not the shared Redis.
describeNeeding('redis-server', 'response cache when its Redis goes away or stalls', () => {
  const reader = testConsumer({ id: 'reader', upstreams: new Set(['macro']) });
  const writer = testConsumer({ id: 'writer', upstreams: new Set(['macro']), write: true });
  const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
  const redis = new RedisServer();
  // The suite's own redis-server starts before the gateway connects to it and is killed after it closes.
  beforeAll(() => redis.start());
  // after* hooks run in the order declared: resume a stopped (SIGSTOP) server before the gateway closes.
  afterAll(() => redis.signal('SIGCONT'));
  const gw = withGateway({
    upstreams: { macro: { fake, token: UPSTREAM_TOKEN } },
    env: () => ({
      REDIS_URL: redis.url,
      ATRIUM_REDIS_PREFIX: 'atrium-outage:',
      ATRIUM_CACHE_REDIS_TIMEOUT_MS: '250',
    }),
    consumers: [reader, writer],
    // The tests run in order on one fake and one Redis.
    resetFakes: false,
  });
  afterAll(() => redis.stop());

  const get = (path: string) => http(gw.url + path, { headers: { authorization: `Bearer ${reader.key}` } });
  const redisErrors = async () => {
    const text = await gw.app.get<Registry>(METRICS_REGISTRY).metrics();
    return Number(/^atrium_cache_redis_errors_total (\d+)/m.exec(text)?.[1] ?? NaN);
  };

  it('Redis killed mid-test: requests still succeed from the upstream; the cache recovers when it returns', async () => {
    const path = '/macro/layout/tables/TB1207';
    expect((await get(path)).headers['x-cache']).toBe('MISS');
    const hit = await get(path);
    expect(hit.headers['x-cache']).toBe('HIT');
    const list = await get('/macro/feeds?limit=1');
    expect((await get('/macro/feeds?limit=1')).headers['x-cache']).toBe('HIT');
    expect(await redisErrors()).toBe(0);

    fake.reset();
    await redis.kill();
    const during: string[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.text).toBe(hit.text);
      during.push(String(res.headers['x-cache']));
    }
    // The in-process LRU stands in (docs/operations.md "Losing Redis"): one vendor call, then hits.
    expect(during).toEqual(['MISS', 'HIT', 'HIT', 'HIT', 'HIT']);
    expect(fake.calls('/layout/tables')).toBe(1);
    // A write still works; its invalidation is replayed when Redis returns, before the cache is used again.
    const patch = await http(`${gw.url}/macro/feeds/${list.json().data[0].id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${writer.key}`, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=while%20Redis%20was%20down',
    });
    expect(patch.status).toBe(200);
    expect(await redisErrors()).toBeGreaterThan(0);

    await redis.start();
    await eventually(async () => (await get(path)).headers['x-cache'] === 'HIT', { intervalMs: 200 });
    // A fresh Redis (this one kept nothing) proves recovery; what matters for the write is that no entry
    // from before it is served once the cache is back.
    const after = await get('/macro/feeds?limit=1');
    expect(after.headers['x-cache']).toBe('MISS');
    expect(after.text).toContain('while Redis was down');
  });

  it('Redis stalled (SIGSTOP): requests still succeed within the timeout; a write made meanwhile is not undone when it resumes', async () => {
    const path = '/macro/dictionary/units';
    expect((await get(path)).status).toBe(200);
    expect((await get(path)).headers['x-cache']).toBe('HIT');
    const feeds = '/macro/feeds?limit=2';
    const before = await get(feeds);
    expect((await get(feeds)).headers['x-cache']).toBe('HIT');
    fake.reset();
    redis.signal('SIGSTOP');
    try {
      const seen: string[] = [];
      for (let i = 0; i < 6; i++) {
        const started = Date.now();
        const res = await get(path);
        expect(res.status).toBe(200);
        seen.push(String(res.headers['x-cache']));
        // Bounded by the cache's Redis timeouts, not by the stalled server (a hang would never end).
        expect(Date.now() - started).toBeLessThan(8_000);
      }
      // Misses until a few timeouts in a row switch Redis off; then the in-process LRU: one more call, hits.
      const misses = seen.filter((c) => c === 'MISS').length;
      expect(seen.slice(misses)).toEqual(Array(seen.length - misses).fill('HIT'));
      expect(seen.at(-1)).toBe('HIT');
      expect(fake.calls('/dictionary/units')).toBe(misses);
      const patch = await http(`${gw.url}/macro/feeds/${before.json().data[0].id}`, {
        method: 'PATCH',
        headers: {
          authorization: `Bearer ${writer.key}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'name=renamed%20while%20Redis%20stalled',
      });
      expect(patch.status).toBe(200);
    } finally {
      redis.signal('SIGCONT');
    }
    await eventually(async () => (await get(path)).headers['x-cache'] === 'HIT', { intervalMs: 200 });
    // The stalled Redis still holds the list from before the write; the replayed invalidation dropped it.
    const after = await get(feeds);
    expect(after.headers['x-cache']).toBe('MISS');
    expect(after.text).toContain('renamed while Redis stalled');
  });
});
