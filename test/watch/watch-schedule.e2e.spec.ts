import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { SseClient } from '../helpers/sse.js';
import { withGateway } from '../helpers/gateway.js';
import { ScriptedVendor } from '../helpers/scripted-vendor.js';
import { releaseCalendar, releaseTimedSettings } from '../helpers/watch-release.js';

/**
 * Polls timed by the macro interface's release calendar, on one gateway in front of a vendor whose
 * `/releases/series/{id}` the test writes: the poller reads the calendar, leaves the series alone until its
 * release window opens, polls it at the release interval through the window, then falls back to the TTL;
 * a series with no release ahead is polled at its TTL throughout.
 */
const TTL_MS = 1000;
const RELEASE_INTERVAL_MS = 100;
const QUIET_MS = 10_000;

describe('GET /watch: polls follow the release calendar (one gateway)', () => {
  const vendor = new ScriptedVendor();
  const watcher = testConsumer({ id: 'schedule-watcher' });
  const gw = withGateway({
    upstreams: { macro: { fake: vendor, token: 'sbx_test_macro_watch_vendor' } },
    consumers: [watcher],
    env: releaseTimedSettings({ ttlMs: TTL_MS, releaseIntervalMs: RELEASE_INTERVAL_MS, quietMs: QUIET_MS }),
  });

  it('reads the calendar, stays quiet before the release, polls often through it, then at the TTL', async () => {
    // The release window: a whole second, starting at least 4 s from now (the vendor writes seconds).
    const from = Math.ceil((Date.now() + 4000) / 1000) * 1000;
    const to = from + 1000;
    vendor.setBody('/releases/series/42', releaseCalendar('42', from, to));
    vendor.setBody('/releases/series/43', { data: [{ entityId: '43', releases: [] }] });
    const path = (id: string) => `path=${encodeURIComponent(`/macro/series/${id}/data`)}`;
    const c = await SseClient.open(`${gw.url}/watch?${path('42')}&${path('43')}`, {
      authorization: `Bearer ${watcher.key}`,
    });
    try {
      await c.nth(2, (e) => e.event === 'answer');
      const opened = Date.now();
      expect(opened).toBeLessThan(from - 1000); // a loaded machine must still leave a quiet stretch
      await eventually(() => Date.now() > to + 2.5 * TTL_MS, { what: 'the window and two TTLs after it' });

      // The poller asked the vendor for both calendars (once each: the answer is cached like any GET).
      expect(vendor.callsTo('/releases/series/42')).toBe(1);
      expect(vendor.callsTo('/releases/series/43')).toBe(1);
      const times = (id: string) => vendor.times.get(`/series/${id}/data`) ?? [];
      const between = (id: string, a: number, b: number) => times(id).filter((t) => t >= a && t < b).length;

      // Before the window: only the consumer's own first read (at the TTL there would have been 2 or more).
      expect(between('42', 0, from - 50)).toBe(1);
      expect(between('43', opened + 50, from - 50)).toBeGreaterThanOrEqual(2);
      // Through the window: every RELEASE_INTERVAL_MS (10 nominally; fewer only on a very loaded machine).
      expect(between('42', from - 50, to + 50)).toBeGreaterThanOrEqual(5);
      expect(between('43', from - 50, to + 50)).toBeLessThanOrEqual(2);
      // After it: no release ahead, so the route's TTL.
      expect(between('42', to + 200, to + 2.5 * TTL_MS)).toBeGreaterThanOrEqual(1);
      expect(between('42', to + 200, to + 2.5 * TTL_MS)).toBeLessThanOrEqual(3);
    } finally {
      c.close();
    }
  });
});
