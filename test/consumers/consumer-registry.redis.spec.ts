import { Redis } from 'ioredis';
import type { AtriumConfig } from '../../src/config/atrium-config.js';
import { toRecord } from '../../src/core/auth/consumer-record.js';
import { ConsumerRegistry } from '../../src/core/auth/consumer-registry.service.js';
import { ConsumerStore } from '../../src/core/auth/consumer-store.service.js';
import { RedisConsumerRepository } from '../../src/core/auth/redis-consumer.repository.js';
import { createRedisClient } from '../../src/redis/redis.module.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { describeRedis } from '../helpers/redis.js';
import { TcpRelay } from '../helpers/tcp-relay.js';

/** A change is in force on every replica within one second (README "Consumers at run time"). */
const WITHIN_MS = 1_000;
/** The gateway's default ATRIUM_REDIS_COMMAND_TIMEOUT_MS. */
const COMMAND_TIMEOUT_MS = 100;

/**
 * One replica's ConsumerRegistry on a real Redis reached through a relay that can hold its traffic, and the
 * rest of the fleet played by a direct connection writing and announcing changes as another replica does.
 */
describeRedis(
  'consumers kept in Redis: a change announced to a replica is in force there',
  ({ prefix, url }) => {
    const target = new URL(url);
    const relay = new TcpRelay(target.hostname, Number(target.port || 6379));
    let direct: Redis;
    let monitor: Redis;
    const stops: Array<() => Promise<unknown>> = [];
    let n = 0;

    beforeAll(async () => {
      await relay.start();
      direct = new Redis(url);
      // Every command the server runs: the suite waits for the registry's version poll with it.
      monitor = await direct.monitor();
    });
    afterEach(async () => {
      relay.delayMs = 0;
      relay.onChunk = undefined;
      for (const stop of stops.splice(0).reverse()) await stop();
    });
    afterAll(async () => {
      monitor.disconnect();
      const keys = await direct.keys(`${prefix}*`);
      if (keys.length) await direct.del(...keys);
      direct.disconnect();
      await relay.cut();
    });

    /** A replica's registry (a Redis store, no consumers file) booted as the gateway boots it. */
    const replica = async (commandTimeoutMs: number) => {
      const p = `${prefix}${++n}:`;
      const redis = createRedisClient({ kind: 'url', url: relay.url, commandTimeoutMs });
      stops.push(() => redis.quit().catch(() => redis.disconnect()));
      await eventually(() => redis.status === 'ready', { what: 'the replica connected' });
      const store = new ConsumerStore([]);
      const config = { upstreams: { macro: {} }, redisPrefix: p } as unknown as AtriumConfig;
      const registry = new ConsumerRegistry(config, store, redis, null);
      stops.push(() => registry.onApplicationShutdown());
      await registry.onApplicationBootstrap();
      const fleet = new RedisConsumerRepository(direct, p);
      return {
        registry,
        fleet,
        has: (id: string) => store.all().some((c) => c.id === id),
        /** Another replica creates a consumer: written and announced as ConsumerRegistry.change does. */
        create: async (id: string) => {
          const { consumer } = testConsumer({ id, upstreams: new Set(['macro']) });
          const snap = await fleet.snapshot();
          expect(await fleet.write(snap.version, id, toRecord(consumer))).toBe(snap.version + 1);
        },
        /** Resolves when the registry next polls the store's version (a poll just done: the next is far). */
        polled: () =>
          new Promise<void>((resolve) => {
            const seen = (_time: string, args: string[]) => {
              if (args[0]?.toLowerCase() !== 'get' || args[1] !== fleet.versionKey) return;
              monitor.off('monitor', seen);
              resolve();
            };
            monitor.on('monitor', seen);
          }),
      };
    };

    it('the replica serves only once its change channel is subscribed (the boot returns after it)', async () => {
      // Every round trip slow: the subscriber's connection, ready check and SUBSCRIBE take longer than the load.
      relay.delayMs = 150;
      const { fleet } = await replica(5_000);
      expect(await direct.pubsub('NUMSUB', fleet.channel)).toEqual([fleet.channel, 1]);
    });

    it('a change whose load failed (a command timed out) is loaded again at once, not at the next poll', async () => {
      const r = await replica(COMMAND_TIMEOUT_MS);
      await r.polled();
      // Redis (or this process) slow for a moment: the load the announcement starts times out.
      relay.delayMs = COMMAND_TIMEOUT_MS + 50;
      const written = Date.now();
      await r.create('made-while-slow');
      await eventually(() => r.registry.state().lastError?.includes('timed out'), {
        what: 'the announced load timed out',
      });
      relay.delayMs = 0;
      await eventually(() => r.has('made-while-slow'), {
        timeoutMs: WITHIN_MS - (Date.now() - written),
        what: 'the change in force within 1 s of the write',
      });
    });

    it('a change announced while a load is in flight is loaded after that load', async () => {
      const r = await replica(5_000);
      await r.polled();
      let written = 0;
      let creating: Promise<void> | undefined;
      // The registry's read of the set is held on its way back; the change is made and announced meanwhile, and
      // its announcement (not held) arrives while that load, which read the set before the change, runs.
      relay.onChunk = (chunk, toClient) => {
        if (!toClient || creating || !chunk.toString().startsWith('*2\r\n')) return;
        relay.delayMs = 0;
        written = Date.now();
        creating = r.create('made-during-a-load');
      };
      relay.delayMs = 300;
      // An announcement of a version this replica does not have starts a load.
      await direct.publish(r.fleet.channel, '77');
      await eventually(() => creating !== undefined, { what: 'the change made during the load' });
      await creating;
      await eventually(() => r.has('made-during-a-load'), {
        timeoutMs: WITHIN_MS - (Date.now() - written),
        what: 'the change in force within 1 s of the write',
      });
    });
  },
);
