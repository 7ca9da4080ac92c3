import { Redis } from 'ioredis';
import type { TestConsumer } from './consumers.js';
import { startGateway, type GatewayHandle } from './gateway.js';
import { ScriptedVendor } from './scripted-vendor.js';
import { SseClient } from './sse.js';

export interface WatchReplicas {
  /** The macro vendor both replicas poll. */
  readonly vendor: ScriptedVendor;
  /** A client of the suite's Redis (set in beforeAll). */
  redis: Redis;
  /** The running replicas; a test that closes or adds one updates the list (afterAll closes what is in it). */
  replicas: GatewayHandle[];
  /** Starts one more replica with the same settings. */
  start(): Promise<GatewayHandle>;
  /** Opens a watch stream of `/macro/series/<id>/data` for each id (closed after the test). */
  open(base: string, key: string, ids: number[]): Promise<SseClient>;
}

/**
 * Two in-process replicas sharing Redis (the suite's prefix) in front of one ScriptedVendor as the macro
 * interface, with the watch settings the fleet's watch suites share (400 ms series TTL, 600 ms lease);
 * `env` adds or overrides. Registers beforeAll/afterEach/afterAll: streams are closed after each test,
 * and the replicas, the prefix's keys and the vendor after all.
 */
export function watchReplicas(o: {
  prefix: string;
  url: string;
  consumers: readonly TestConsumer[];
  env: Record<string, string>;
}): WatchReplicas {
  const clients: SseClient[] = [];
  const fleet: WatchReplicas = {
    vendor: new ScriptedVendor(),
    redis: undefined as unknown as Redis,
    replicas: [],
    start: () =>
      startGateway({
        env: {
          UPSTREAM_MACRO_BASE_URL: fleet.vendor.url,
          REDIS_URL: o.url,
          ATRIUM_REDIS_PREFIX: o.prefix,
          ATRIUM_CACHE_TTL_OVERRIDES: 'series=400ms',
          ATRIUM_WATCH_MIN_INTERVAL_MS: '50',
          ATRIUM_WATCH_LEASE_MS: '600',
          ATRIUM_CACHE_REDIS_TIMEOUT_MS: '2000',
          ATRIUM_REDIS_COMMAND_TIMEOUT_MS: '2000',
          ...o.env,
        },
        consumers: o.consumers.map((c) => c.consumer),
      }),
    open: async (base, key, ids) => {
      const c = await SseClient.open(
        `${base}/watch?${ids.map((i) => `path=${encodeURIComponent(`/macro/series/${i}/data`)}`).join('&')}`,
        { authorization: `Bearer ${key}` },
      );
      clients.push(c);
      return c;
    },
  };

  beforeAll(async () => {
    await fleet.vendor.start();
    fleet.redis = new Redis(o.url);
    fleet.replicas = [await fleet.start(), await fleet.start()];
  }, 60_000);
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });
  afterAll(async () => {
    for (const r of fleet.replicas) await r.close().catch(() => undefined);
    const keys = await fleet.redis.keys(`${o.prefix}*`);
    if (keys.length) await fleet.redis.del(...keys);
    await fleet.redis.quit();
    await fleet.vendor.close();
  }, 60_000);

  return fleet;
}
