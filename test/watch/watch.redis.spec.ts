import { createHash } from 'node:crypto';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { http } from '../helpers/gateway.js';
import { describeRedis } from '../helpers/redis.js';
import type { SseClient, SseEvent } from '../helpers/sse.js';
import { watchReplicas } from '../helpers/watch-replicas.js';

const TTL_MS = 400;
const answers = (e: SseEvent) => e.event === 'answer';
/** A metric's value summed over its series whose line matches. */
const metric = async (url: string, line: RegExp): Promise<number> =>
  (await http(`${url}/metrics`)).text
    .split('\n')
    .filter((l) => line.test(l))
    .reduce((n, l) => n + Number(l.split(' ').pop()), 0);

/**
 * Two gateway replicas sharing Redis (a prefix of their own), with watchers on each: one replica polls each
 * resource for both (a lease in Redis), a change it sees reaches the watchers of both (pub/sub), and the
 * lease moves to the other replica when its holder closes or loses it.
 */
describeRedis('GET /watch across two replicas sharing Redis', ({ prefix, url }) => {
  const watcher = testConsumer({ id: 'fleet-watcher' });
  const fleet = watchReplicas({
    prefix,
    url,
    consumers: [watcher],
    env: {
      UPSTREAM_MACRO_TOKEN: 'sbx_test_macro_watch_redis_vendor',
      ATRIUM_CACHE_TTL_OVERRIDES: `series=${TTL_MS}ms`,
    },
  });
  const { vendor, start } = fleet;
  const watch = async (base: string, ids: number[]) => {
    const c = await fleet.open(base, watcher.key, ids);
    expect(c.status).toBe(200);
    return c;
  };
  /** Both replicas' subscriber connections listen on the changes channel. */
  const bothListen = () =>
    eventually(
      async () => {
        const [, n] = (await fleet.redis.pubsub('NUMSUB', `${prefix}watch:changes`)) as [string, number];
        return Number(n) >= 2;
      },
      { what: 'both replicas subscribed' },
    );
  const held = (base: string) => metric(base, /^atrium_watch_resources\{role="held"\}/);
  const valueOf = (e: SseEvent) =>
    (e.json() as { body: { data: Array<{ value: number }> } }).body.data[0].value;

  it('one poll per interval for the fleet, and every watcher on both replicas gets the change', async () => {
    await bothListen();
    const ids = [101, 102];
    for (const id of ids) vendor.set(`/series/${id}/data`, 1);
    // N = 3 watchers per replica, 6 in all, each watching K = 2 resources.
    const subs: SseClient[] = [];
    for (const r of fleet.replicas) for (let i = 0; i < 3; i++) subs.push(await watch(r.url, ids));
    for (const s of subs) await s.nth(2, answers);
    // Each resource is polled by exactly one replica.
    await eventually(
      async () => (await held(fleet.replicas[0].url)) + (await held(fleet.replicas[1].url)) === 2,
      {
        what: 'two held resources in the fleet',
      },
    );
    vendor.calls.clear();
    const t0 = Date.now();
    await eventually(() => vendor.callsTo('/series/101/data') >= 6, {
      what: 'six polls of 101',
      timeoutMs: 20_000,
    });
    const elapsed = Date.now() - t0;
    const calls = ids.map((id) => vendor.callsTo(`/series/${id}/data`));
    // One vendor call per resource per interval (TTL) for the whole fleet, not one per replica or watcher.
    const perInterval = Math.ceil(elapsed / TTL_MS) + 1;
    for (const n of calls) expect(n).toBeLessThanOrEqual(perInterval);
    process.stderr.write(
      `[watch figures] ${subs.length} watchers × ${ids.length} resources on 2 replicas, ${elapsed} ms, interval ${TTL_MS} ms: ` +
        `vendor calls ${calls.join('+')} = ${calls[0] + calls[1]} (polling each watcher at the interval: ` +
        `${Math.floor((subs.length * ids.length * elapsed) / TTL_MS)})\n`,
    );
    // A change at the vendor reaches all six watchers, on both replicas.
    vendor.set('/series/102/data', 2);
    for (const s of subs) {
      const e = await s.nth(
        1,
        (x) => answers(x) && x.json().path === '/macro/series/102/data' && valueOf(x) === 2,
        'the change',
      );
      expect(e.id).toMatch(/^"[\w-]{32}","[\w-]{32}"$/);
    }
    // Exactly once each: no duplicate from the other replica.
    await eventually(() => vendor.callsTo('/series/102/data') >= calls[1] + 3, { what: 'later polls' });
    for (const s of subs)
      expect(s.events.filter((x) => answers(x) && x.json().path === '/macro/series/102/data')).toHaveLength(
        2,
      );
  });

  it('a lease lost to another holder stops the polls until it lapses, then they resume', async () => {
    await bothListen();
    vendor.set('/series/103/data', 1);
    const a = await watch(fleet.replicas[0].url, [103]);
    await a.nth(1, answers);
    await eventually(async () => (await held(fleet.replicas[0].url)) === 1, { what: 'replica 0 holds 103' });
    // A holder that is not there (a crashed replica): its lease lapses after its PX, then 103 is polled again.
    const id = createHash('sha256').update('/macro/series/103/data').digest('base64url').slice(0, 24);
    await fleet.redis.set(`${prefix}watch:lease:${id}`, 'crashed-replica', 'PX', 1500);
    await eventually(async () => (await held(fleet.replicas[0].url)) === 0, { what: 'the lease lost' });
    vendor.set('/series/103/data', 2);
    const e = await a.nth(1, (x) => answers(x) && valueOf(x) === 2, 'the change after the lapse');
    expect(e.id).not.toBe(a.events[0].id);
    expect(await fleet.redis.get(`${prefix}watch:lease:${id}`)).not.toBe('crashed-replica');
  });

  it('the other replica takes the polls over when the holder closes, and its watchers miss no change', async () => {
    await bothListen();
    vendor.set('/series/104/data', 1);
    const a = await watch(fleet.replicas[0].url, [104]);
    const b = await watch(fleet.replicas[1].url, [104]);
    await a.nth(1, answers);
    await b.nth(1, answers);
    const holder = await eventually(
      async () => {
        const h = [await held(fleet.replicas[0].url), await held(fleet.replicas[1].url)];
        return h[0] + h[1] === 1 ? h.indexOf(1) + 1 : 0;
      },
      { what: 'one holder of 104' },
    );
    const [gone, survivor] =
      holder === 1 ? [fleet.replicas[0], fleet.replicas[1]] : [fleet.replicas[1], fleet.replicas[0]];
    const watcherThere = holder === 1 ? b : a;
    await gone.close();
    fleet.replicas = [survivor];
    vendor.set('/series/104/data', 2);
    const t0 = Date.now();
    await watcherThere.nth(1, (x) => answers(x) && valueOf(x) === 2, 'the change on the survivor');
    process.stderr.write(
      `[watch figures] takeover after the holder closed: change seen ${Date.now() - t0} ms after it was made\n`,
    );
    expect(await held(survivor.url)).toBe(1);
    fleet.replicas.push(await start());
  }, 30_000);
});
