import { Redis } from 'ioredis';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { type SpawnedGateway, withGateway } from '../helpers/gateway.js';
import { describeRedis } from '../helpers/redis.js';
import { burst, sha256Hex } from '../helpers/burst.js';

const UPSTREAM_TOKEN = 'sbx_macro_fleet_cache_5e0f';

describeRedis('response cache across 3 gateway processes sharing Redis', ({ prefix, url }) => {
  const reader = testConsumer({ id: 'fleet-reader', upstreams: new Set(['macro']) });
  const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
  const gateways = withGateway({
    mode: 'process',
    instances: 3,
    upstreams: { macro: { fake, token: UPSTREAM_TOKEN } },
    env: {
      LOG_LEVEL: 'info',
      REDIS_URL: url,
      ATRIUM_REDIS_PREFIX: prefix,
      // This test checks fleet coordination, not Redis latency (the outage suite does): on a shared 2-core
      // machine three gateways taking 1,000 requests at once can starve their event loops past 250 ms.
      ATRIUM_CACHE_REDIS_TIMEOUT_MS: '3000',
      UPSTREAM_MACRO_TIMEOUT_MS: '15000',
    },
    consumers: [reader],
    spawnTimeoutMs: 40_000,
    hookTimeoutMs: 120_000,
  });
  let fleet: SpawnedGateway[] = [];
  let redis: Redis;

  beforeAll(() => {
    fleet = gateways.processes;
    redis = new Redis(url);
  });
  afterAll(async () => {
    if (redis) {
      const keys = await redis.keys(`${prefix}*`);
      if (keys.length) await redis.del(...keys);
      redis.disconnect();
    }
  });

  it('1,000 concurrent identical cold requests spread over the fleet → exactly 1 upstream call, identical bodies', async () => {
    // Slow enough that the whole burst is in flight on all three processes before the answer comes.
    fake.behave({ latencyMs: 2500 });
    const results = await burst(
      fleet.map((g) => g.url),
      '/macro/series/search?keyword=cpi&limit=20',
      1000,
      { authorization: `Bearer ${reader.key}` },
    );
    if (fake.calls('/series/search') !== 1) console.log(fleet.map((g) => g.output()).join('\n----\n'));
    expect(fake.calls('/series/search')).toBe(1);
    expect(results.map((r) => r.status)).toEqual(Array(1000).fill(200));
    expect(new Set(results.map((r) => sha256Hex(r.body))).size).toBe(1);
    expect(JSON.parse(results[0].body.toString()).data).toBeDefined();
    const outcomes = results.map((r) => r.cache);
    expect(outcomes.filter((c) => c === 'MISS')).toHaveLength(1);
    expect(outcomes.every((c) => c === 'MISS' || c === 'COALESCED' || c === 'HIT')).toBe(true);
    // Each process answered part of the burst without calling the upstream itself.
    for (let i = 0; i < 3; i++) {
      const mine = results.filter((_, j) => j % 3 === i);
      expect(mine.filter((r) => r.cache !== 'MISS').length).toBeGreaterThan(300);
    }
    expect(await redis.keys(`${prefix}cache-lock:*`)).toEqual([]);
  }, 90_000);
});
