import { randomBytes } from 'node:crypto';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { SseClient } from '../helpers/sse.js';
import { withGateway } from '../helpers/gateway.js';
import { ScriptedVendor } from '../helpers/scripted-vendor.js';

interface Watched {
  resource: string;
  subscribers: number;
  subscribersHere: number;
  polls: number;
  polledHere: boolean;
  lastChange: string | null;
}

/**
 * The operator console's most-watched list (`GET /console/api/state`, `watched`) on a replica without Redis:
 * resources by this replica's subscribers, most first, with the polls heard and the last change, read as an
 * operator. Over a fleet: watch-console.redis.spec.ts.
 */
describe('console: the most watched resources', () => {
  const operator = `op_${randomBytes(24).toString('base64url')}`;
  const vendor = new ScriptedVendor();
  const a = testConsumer({ id: 'watcher-a' });
  const b = testConsumer({ id: 'watcher-b' });
  const gw = withGateway({
    upstreams: { macro: { fake: vendor, token: 'sbx_test_macro_watch_vendor' } },
    consumers: [a, b],
    env: {
      ATRIUM_OPERATOR_TOKEN: operator,
      ATRIUM_CACHE_TTL_OVERRIDES: 'series=300ms',
      ATRIUM_WATCH_MIN_INTERVAL_MS: '50',
      ATRIUM_WATCH_LEASE_MS: '600',
    },
  });
  const watched = async (): Promise<{ scope: string; resources: Watched[] }> => {
    const res = await fetch(`${gw.url}/console/api/state`, {
      headers: { authorization: `Bearer ${operator}` },
    });
    expect(res.status).toBe(200);
    return ((await res.json()) as { watched: { scope: string; resources: Watched[] } }).watched;
  };
  const open = (path: string, key: string) =>
    SseClient.open(`${gw.url}/watch?path=${encodeURIComponent(path)}`, { authorization: `Bearer ${key}` });

  it('lists resources by subscribers on this replica, with the polls heard and the last change', async () => {
    expect(await watched()).toEqual({ scope: 'replica', resources: [] });
    vendor.set('/series/31/data', 1);
    vendor.set('/series/32/data', 1);
    const streams = await Promise.all([
      open('/macro/series/31/data', a.key),
      open('/macro/series/31/data', a.key),
      open('/macro/series/31/data', b.key),
      open('/macro/series/32/data', b.key),
    ]);
    try {
      await Promise.all(streams.map((s) => s.nth(1, (e) => e.event === 'answer')));
      const quiet = await watched();
      expect(quiet.resources.map((r) => [r.resource, r.subscribers, r.lastChange])).toEqual([
        ['/macro/series/31/data', 3, null],
        ['/macro/series/32/data', 1, null],
      ]);
      vendor.set('/series/31/data', 2);
      await streams[0].nth(2, (e) => e.event === 'answer', 'the change');
      const seen = Date.now();
      const after = await eventually(
        async () => {
          const w = await watched();
          return w.resources[0].lastChange && w.resources[1].polls >= 2 ? w : undefined;
        },
        { what: 'the change and polls listed' },
      );
      const [top, second] = after.resources;
      expect(top).toMatchObject({
        resource: '/macro/series/31/data',
        subscribers: 3,
        subscribersHere: 3,
        polledHere: true,
      });
      expect(Math.abs(Date.parse(top.lastChange!) - seen)).toBeLessThan(2000);
      // Every poll the list counts reached the vendor (the TTL equals the interval: each poll misses).
      expect(top.polls).toBeGreaterThanOrEqual(1);
      expect(top.polls).toBeLessThanOrEqual(vendor.callsTo('/series/31/data'));
      expect(second).toMatchObject({ resource: '/macro/series/32/data', subscribers: 1, lastChange: null });
    } finally {
      for (const s of streams) s.close();
    }
    await eventually(async () => (await watched()).resources.length === 0, { what: 'the list emptied' });
  });

  it('is the operator’s: a consumer key does not read it', async () => {
    const res = await fetch(`${gw.url}/console/api/state`, { headers: { authorization: `Bearer ${a.key}` } });
    expect(res.status).toBe(401);
  });
});
