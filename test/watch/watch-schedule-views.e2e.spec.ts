import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { SseClient } from '../helpers/sse.js';
import { withGateway } from '../helpers/gateway.js';
import { ScriptedVendor } from '../helpers/scripted-vendor.js';
import { releaseCalendar, releaseTimedSettings, twoSeriesViewsFile } from '../helpers/watch-release.js';

const views = twoSeriesViewsFile('atrium-watch-schedule-views-');
afterAll(() => views.remove());

const TTL_MS = 1000;
const RELEASE_INTERVAL_MS = 100;
const QUIET_MS = 10_000;
const HOUR_MS = 3_600_000;

/**
 * A composite view of two series and a list of two series, watched on one gateway in front of a vendor whose
 * release calendars (`/releases/series/{id}`) the test writes: each is polled by the calendars of the series
 * it reads, so it is left alone until a release of one of them, polled often through it (that series' part
 * asked of the vendor, the other's taken from the cache), then at the TTL once no release is ahead.
 */
describe('GET /watch: views and series lists follow their series’ release calendars (one gateway)', () => {
  const vendor = new ScriptedVendor();
  const watcher = testConsumer({ id: 'schedule-views-watcher' });
  const gw = withGateway({
    upstreams: { macro: { fake: vendor, token: 'sbx_test_macro_schedule_views_vendor' } },
    consumers: [watcher],
    env: {
      ATRIUM_VIEWS_FILE: views.file,
      ...releaseTimedSettings({ ttlMs: TTL_MS, releaseIntervalMs: RELEASE_INTERVAL_MS, quietMs: QUIET_MS }),
    },
  });

  it('stays quiet before a release of any of its series, polls often through it, then at the TTL', async () => {
    // Series 42 releases in a whole second at least 4 s from now; 43 and 44 an hour later.
    const from = Math.ceil((Date.now() + 4000) / 1000) * 1000;
    const to = from + 1000;
    vendor.setBody('/releases/series/42', releaseCalendar('42', from, to));
    vendor.setBody('/releases/series/43', releaseCalendar('43', from + HOUR_MS, to + HOUR_MS));
    vendor.setBody('/releases/series/44', releaseCalendar('44', from + HOUR_MS, to + HOUR_MS));
    const view = '/views/two-series?a=42&b=43';
    const list = '/macro/series/44,42/data';
    const c = await SseClient.open(
      `${gw.url}/watch?path=${encodeURIComponent(view)}&path=${encodeURIComponent(list)}`,
      { authorization: `Bearer ${watcher.key}` },
    );
    try {
      expect(c.status).toBe(200);
      await c.nth(2, (e) => e.event === 'answer');
      const opened = Date.now();
      expect(opened).toBeLessThan(from - 1000); // a loaded machine must still leave a quiet stretch
      await eventually(() => Date.now() > to + 2.5 * TTL_MS, { what: 'the window and two TTLs after it' });

      // One read of each series' calendar, shared by the view and the list (cached like any GET).
      for (const id of ['42', '43', '44']) expect(vendor.callsTo(`/releases/series/${id}`)).toBe(1);
      const listPath = [...vendor.times.keys()].find(
        (p) => p.startsWith('/series/44') && p.endsWith('/data'),
      );
      expect(listPath).toMatch(/^\/series\/44(,|%2C)42\/data$/i);
      const times = (path: string) => vendor.times.get(path) ?? [];
      const between = (path: string, a: number, b: number) =>
        times(path).filter((t) => t >= a && t < b).length;

      // Before the window: only the consumer's own first reads (at the TTL there would be 3 or more each).
      for (const path of ['/series/42/data', '/series/43/data', listPath!])
        expect(between(path, 0, from - 50)).toBe(1);
      // Through the window: every RELEASE_INTERVAL_MS (10 nominally; fewer only on a very loaded machine),
      // straight from the vendor for what 42 is in; the view's other part from the cache (its TTL).
      expect(between('/series/42/data', from - 50, to + 50)).toBeGreaterThanOrEqual(5);
      expect(between(listPath!, from - 50, to + 50)).toBeGreaterThanOrEqual(5);
      expect(between('/series/43/data', from - 50, to + 50)).toBeLessThanOrEqual(2);
      // After it: 42 has no release ahead, so the TTL.
      for (const path of ['/series/42/data', listPath!]) {
        expect(between(path, to + 200, to + 2.5 * TTL_MS)).toBeGreaterThanOrEqual(1);
        expect(between(path, to + 200, to + 2.5 * TTL_MS)).toBeLessThanOrEqual(3);
      }
    } finally {
      c.close();
    }
  });
});
