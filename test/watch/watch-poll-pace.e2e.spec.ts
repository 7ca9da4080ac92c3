import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { SseClient } from '../helpers/sse.js';
import { withGateway } from '../helpers/gateway.js';
import { ScriptedVendor } from '../helpers/scripted-vendor.js';

const TTL_MS = 1000;
/** The vendor's answer time: longer than the poll loop's quick second read after a stale answer. */
const VENDOR_MS = 300;
const PATH = '/series/5150/data';

/**
 * A watched route is polled at its TTL as the vendor sees it, even when the vendor is slow: each poll asks
 * the vendor. Read through the cache instead, a poll found the entry stale, started a refresh, read again
 * before the refresh landed, and then waited a whole interval, by which time the refreshed entry was still
 * fresh for a few milliseconds: that poll was a cache hit and the vendor was asked one interval later (2 s
 * apart for a 1 s TTL), so a change could reach the page an interval late.
 */
describe('GET /watch: the poll pace at the vendor (one gateway)', () => {
  const vendor = new ScriptedVendor();
  const watcher = testConsumer({ id: 'pace-watcher', upstreams: new Set(['macro']) });
  const gw = withGateway({
    upstreams: { macro: { fake: vendor, token: 'sbx_test_macro_watch_pace_vendor' } },
    consumers: [watcher],
    env: { ATRIUM_CACHE_TTL_OVERRIDES: `series=${TTL_MS}ms`, ATRIUM_WATCH_MIN_INTERVAL_MS: '50' },
  });

  it('a slow vendor sees one poll per TTL plus its own answer time, never a skipped interval', async () => {
    vendor.set(PATH, 1);
    vendor.delay(PATH, VENDOR_MS);
    const stream = await SseClient.open(`${gw.url}/watch?path=${encodeURIComponent(`/macro${PATH}`)}`, {
      authorization: `Bearer ${watcher.key}`,
    });
    try {
      expect(stream.status).toBe(200);
      // The consumer's first read, then six polls.
      await eventually(() => vendor.callsTo(PATH) >= 7, { what: 'seven vendor calls', timeoutMs: 20_000 });
      const times = vendor.times.get(PATH)!;
      const gaps = times.slice(1).map((t, i) => t - times[i]);
      process.stderr.write(
        `[watch pace] vendor call gaps (TTL ${TTL_MS} ms, vendor ${VENDOR_MS} ms): ${gaps.join(', ')} ms\n`,
      );
      // Each gap is the TTL from the last answer, the vendor's answer time and the poll loop's tick: under two
      // TTLs, where a poll answered from the cache makes it two TTLs and more.
      for (const gap of gaps) expect(gap).toBeLessThan(2 * TTL_MS - 100);
      // And no faster than the TTL: a poll is not made before the answer it would refresh has aged.
      for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(TTL_MS);
    } finally {
      stream.close();
    }
  });
});
