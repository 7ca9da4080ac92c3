import { createHash } from 'node:crypto';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { describeRedis } from '../helpers/redis.js';
import { watchReplicas } from '../helpers/watch-replicas.js';

const LEASE_MS = 600;

/**
 * The cap on paths per consumer holds over the fleet: two replicas sharing Redis count a consumer's paths
 * together, a closed stream gives its paths back on every replica, and the count of a replica that died
 * (it renews no more) lapses after a lease.
 */
describeRedis('GET /watch: the paths cap per consumer across two replicas', ({ prefix, url }) => {
  const capped = testConsumer({ id: 'fleet-capped' });
  const other = testConsumer({ id: 'fleet-other' });
  const fleet = watchReplicas({
    prefix,
    url,
    consumers: [capped, other],
    env: {
      UPSTREAM_MACRO_TOKEN: 'sbx_test_macro_watch_cap_vendor',
      ATRIUM_WATCH_LEASE_MS: String(LEASE_MS),
      ATRIUM_WATCH_MAX_PATHS_PER_CONSUMER: '3',
    },
  });
  const watch = (base: string, key: string, ids: number[]) => fleet.open(base, key, ids);
  const countKey = `${prefix}watch:consumer:${createHash('sha256').update('fleet-capped').digest('base64url').slice(0, 24)}`;

  it('counts a consumer’s paths on both replicas together, and a closed stream gives them back', async () => {
    const [a, b] = fleet.replicas;
    const first = await watch(a.url, capped.key, [1, 2]);
    expect(first.status).toBe(200);
    await first.nth(2);
    // Two on replica A: one more fits on B, a second does not (3 in all), whichever replica is asked.
    const refusedOnB = await watch(b.url, capped.key, [3, 4]);
    expect(refusedOnB.status).toBe(429);
    expect(JSON.parse(refusedOnB.text).error).toMatchObject({
      code: 'WATCH_LIMIT_REACHED',
      message: expect.stringContaining('it watches 2 and asked for 2 more'),
    });
    const third = await watch(b.url, capped.key, [3]);
    expect(third.status).toBe(200);
    await third.nth(1);
    const refusedOnA = await watch(a.url, capped.key, [4]);
    expect(refusedOnA.status).toBe(429);
    // Another consumer has its own count.
    const another = await watch(b.url, other.key, [4, 5]);
    expect(another.status).toBe(200);
    // Closing A's stream gives its two paths back to the fleet: B takes them.
    first.close();
    const again = await eventually(
      async () => {
        const c = await watch(b.url, capped.key, [4, 5]);
        return c.status === 200 ? c : undefined;
      },
      { what: 'the paths given back' },
    );
    await again.nth(2);
  });

  it('the count of a replica that died lapses after a lease; live replicas keep theirs renewed', async () => {
    const [a, b] = fleet.replicas;
    const { redis } = fleet;
    await eventually(async () => (await redis.hlen(countKey)) === 0, { what: 'the last test’s counts gone' });
    // A replica that holds 3 paths of the consumer and dies: it never renews its count.
    const t = await redis.time();
    const now = Number(t[0]) * 1000 + Math.floor(Number(t[1]) / 1000);
    await redis.hset(countKey, 'dead-replica', `3:${now + 1500}`);
    await redis.pexpire(countKey, 1500);
    const refused = await watch(a.url, capped.key, [6]);
    expect(refused.status).toBe(429);
    // A live replica's stream outlives several leases: its count is renewed, the dead one's lapses.
    const t0 = Date.now();
    const opened = await eventually(
      async () => {
        const c = await watch(a.url, capped.key, [6]);
        return c.status === 200 ? c : undefined;
      },
      { what: 'the dead replica’s count lapsed' },
    );
    process.stderr.write(
      `[watch figures] a dead replica's count lapsed ${Date.now() - t0} ms after it was seen\n`,
    );
    await opened.nth(1);
    await eventually(async () => !(await redis.hexists(countKey, 'dead-replica')), {
      what: 'the field dropped',
    });
    // The live replica's count is renewed: its lapse time moves on by three leases while the stream lives.
    const lapseOfLive = async () => {
      const fields = await redis.hgetall(countKey);
      const live = Object.entries(fields).find(([k]) => k !== 'dead-replica');
      return live ? Number(live[1].split(':')[1]) : 0;
    };
    const firstLapse = await lapseOfLive();
    expect(firstLapse).toBeGreaterThan(0);
    await eventually(async () => (await lapseOfLive()) >= firstLapse + 3 * LEASE_MS, {
      what: 'the live count renewed over three leases',
    });
    // Still counted after three leases: two more paths do not fit.
    const stillCounted = await watch(b.url, capped.key, [7, 8, 9]);
    expect(stillCounted.status).toBe(429);
    expect(JSON.parse(stillCounted.text).error.message).toContain('it watches 1 and asked for 3 more');
  });
});
