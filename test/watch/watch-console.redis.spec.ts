import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { startGateway, type GatewayHandle } from '../helpers/gateway.js';
import { describeRedis } from '../helpers/redis.js';
import { SseClient } from '../helpers/sse.js';
import { ScriptedVendor } from '../helpers/scripted-vendor.js';

const enc = encodeURIComponent;
const LEASE_MS = 600;

interface Watched {
  resource: string;
  subscribers: number;
  subscribersHere: number;
  polls: number;
  polledHere: boolean;
  lastChange: string | null;
}

/**
 * The console's most-watched list over a fleet: two replicas sharing Redis, streams on each; either
 * replica's console answers the fleet's subscribers per resource (and its own beside them). A replica that
 * stops stops counting, and so does one that died without a word once its report lapses (a lease).
 */
describeRedis('console: the most watched resources across two replicas', ({ prefix, url }) => {
  const operator = `op_${randomBytes(24).toString('base64url')}`;
  const vendor = new ScriptedVendor();
  const a = testConsumer({ id: 'console-fleet-a' });
  const b = testConsumer({ id: 'console-fleet-b' });
  let replicas: GatewayHandle[] = [];
  let redis: Redis;
  const clients: SseClient[] = [];

  const start = () =>
    startGateway({
      env: {
        UPSTREAM_MACRO_BASE_URL: vendor.url,
        UPSTREAM_MACRO_TOKEN: 'macro-console-fleet-vendor-key',
        REDIS_URL: url,
        ATRIUM_REDIS_PREFIX: prefix,
        ATRIUM_OPERATOR_TOKEN: operator,
        ATRIUM_CACHE_TTL_OVERRIDES: 'series=400ms',
        ATRIUM_WATCH_MIN_INTERVAL_MS: '50',
        ATRIUM_WATCH_LEASE_MS: String(LEASE_MS),
        ATRIUM_CACHE_REDIS_TIMEOUT_MS: '2000',
        ATRIUM_REDIS_COMMAND_TIMEOUT_MS: '2000',
      },
      consumers: [a.consumer, b.consumer],
    });
  const watch = async (base: string, key: string, id: number) => {
    const c = await SseClient.open(`${base}/watch?path=${enc(`/macro/series/${id}/data`)}`, {
      authorization: `Bearer ${key}`,
    });
    expect(c.status).toBe(200);
    clients.push(c);
    await c.nth(1, (e) => e.event === 'answer');
    return c;
  };
  const watched = async (base: string): Promise<{ scope: string; resources: Watched[] }> => {
    const res = await fetch(`${base}/console/api/state`, {
      headers: { authorization: `Bearer ${operator}` },
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { watched: { scope: string; resources: Watched[] } }).watched;
  };
  const counts = async (base: string) =>
    (await watched(base)).resources.map((r) => [r.resource, r.subscribers, r.subscribersHere]);

  beforeAll(async () => {
    await vendor.start();
    redis = new Redis(url);
    replicas = [await start(), await start()];
  }, 60_000);
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  afterAll(async () => {
    for (const r of replicas) await r.close().catch(() => undefined);
    const keys = await redis.keys(`${prefix}*`);
    if (keys.length) await redis.del(...keys);
    await redis.quit();
    await vendor.close();
  }, 60_000);

  it('either replica lists the fleet’s subscribers per resource, a dead replica’s lapse after a lease', async () => {
    const [ra, rb] = replicas;
    expect(await watched(ra.url)).toEqual({ scope: 'fleet', resources: [] });
    vendor.set('/series/41/data', 1);
    vendor.set('/series/42/data', 1);
    vendor.set('/series/43/data', 1);
    // Series 41: 1 stream on A, 2 on B; 42: 1 on A; 43: 1 on B (read on A, where no stream watches it).
    await watch(ra.url, a.key, 41);
    await watch(rb.url, a.key, 41);
    await watch(rb.url, b.key, 41);
    await watch(ra.url, b.key, 42);
    await watch(rb.url, b.key, 43);
    const fleet = [
      ['/macro/series/41/data', 3, 1],
      ['/macro/series/42/data', 1, 1],
      ['/macro/series/43/data', 1, 0],
    ];
    await eventually(async () => JSON.stringify(await counts(ra.url)) === JSON.stringify(fleet), {
      what: 'the fleet’s counts on A',
    });
    expect(await counts(rb.url)).toEqual([
      ['/macro/series/41/data', 3, 2],
      ['/macro/series/42/data', 1, 0],
      ['/macro/series/43/data', 1, 1],
    ]);
    expect((await watched(rb.url)).scope).toBe('fleet');

    // A replica that died holding 5 streams of series 42 and never reports again: counted until its
    // report lapses, a lease after it was made; the live replicas' reports are renewed meanwhile.
    const t = await redis.time();
    const now = Number(t[0]) * 1000 + Math.floor(Number(t[1]) / 1000);
    await redis.hset(
      `${prefix}watch:watched`,
      'dead-replica',
      `${now + 3000}:${JSON.stringify([['/macro/series/42/data', 5, 0, 0]])}`,
    );
    expect(await counts(ra.url)).toEqual([
      ['/macro/series/42/data', 6, 1],
      ['/macro/series/41/data', 3, 1],
      ['/macro/series/43/data', 1, 0],
    ]);
    await eventually(async () => JSON.stringify(await counts(ra.url)) === JSON.stringify(fleet), {
      what: 'the dead replica’s counts lapsed',
    });
    expect(await redis.hexists(`${prefix}watch:watched`, 'dead-replica')).toBe(0);
  });

  it('a replica that stops stops counting at once', async () => {
    const [ra] = replicas;
    await eventually(async () => (await watched(ra.url)).resources.length === 0, {
      what: 'the last test’s streams gone',
    });
    const c = await start();
    let closed = false;
    try {
      await watch(ra.url, a.key, 44);
      await watch(c.url, a.key, 44);
      await watch(c.url, b.key, 45);
      await eventually(
        async () =>
          JSON.stringify(await counts(ra.url)) ===
          JSON.stringify([
            ['/macro/series/44/data', 2, 1],
            ['/macro/series/45/data', 1, 0],
          ]),
        { what: 'the third replica counted' },
      );
      await c.close();
      closed = true;
      // Its report is removed as it closes: no wait for a lease (the streams it held end with it).
      expect(await counts(ra.url)).toEqual([['/macro/series/44/data', 1, 1]]);
    } finally {
      if (!closed) await c.close().catch(() => undefined);
    }
  });
});
