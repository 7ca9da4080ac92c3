import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { SseClient } from '../helpers/sse.js';
import { withGateway } from '../helpers/gateway.js';
import { ScriptedVendor } from '../helpers/scripted-vendor.js';

/**
 * A watched path whose first read fails at the vendor: the stream says so in an `error` event with
 * `"retrying": true` and the envelope, keeps the path, and the polls retry it sooner than the interval,
 * each wait twice the last, never during the vendor's cooldown, until the answer comes.
 */
const INTERVAL_MS = 10_000;
const enc = encodeURIComponent;

describe('GET /watch: a first read that fails is retried', () => {
  const vendor = new ScriptedVendor();
  const watcher = testConsumer({ id: 'retry-watcher' });
  const gw = withGateway({
    upstreams: { macro: { fake: vendor, token: 'sbx_test_macro_watch_retry_vendor' } },
    consumers: [watcher],
    env: {
      ATRIUM_CACHE_TTL_OVERRIDES: `series=${INTERVAL_MS}ms`,
      ATRIUM_WATCH_MIN_INTERVAL_MS: '50',
      ATRIUM_WATCH_LEASE_MS: '600',
    },
  });
  const clients: SseClient[] = [];
  const watch = async (path: string) => {
    const c = await SseClient.open(`${gw.url}/watch?path=${enc(path)}`, {
      authorization: `Bearer ${watcher.key}`,
    });
    expect(c.status).toBe(200);
    clients.push(c);
    return c;
  };
  afterEach(() => {
    for (const c of clients.splice(0)) c.close();
  });

  it('tells the client, retries with a growing wait, then sends the answer', async () => {
    vendor.set('/series/71/data', 7);
    vendor.failNext('/series/71/data', 3, 500);
    const c = await watch('/macro/series/71/data');
    const first = await c.nth(1);
    expect(first.event).toBe('error');
    expect(first.json()).toMatchObject({
      path: '/macro/series/71/data',
      retrying: true,
      error: { code: 'UPSTREAM_ERROR', status: 502, retryable: true },
    });
    const answer = await c.nth(1, (e) => e.event === 'answer', 'the answer after the retries');
    expect(answer.json().body).toEqual({ data: [{ value: 7 }] });
    expect(answer.id).toBe(answer.json().etag);
    // The consumer's read and three polls: two more failures, then the answer.
    const times = vendor.times.get('/series/71/data')!;
    expect(times).toHaveLength(4);
    const gaps = times.slice(1).map((t, i) => t - times[i]);
    process.stderr.write(
      `[watch figures] first read failed 3 times: retries after ${gaps.join(', ')} ms (waits 250, 500, 1000 ms), ` +
        `answer ${times[3] - times[0]} ms after the first read\n`,
    );
    // Each wait at least its schedule (a loaded machine only lengthens it), and well under the interval.
    gaps.forEach((gap, i) => expect(gap).toBeGreaterThanOrEqual(250 * 2 ** i - 20));
    expect(times[3] - times[0]).toBeLessThan(INTERVAL_MS);
    expect(c.events.map((e) => e.event)).toEqual(['error', 'answer']);
  });

  it('waits out the vendor cooldown before retrying', async () => {
    vendor.set('/series/72/data', 9);
    vendor.failNext('/series/72/data', 1, 500);
    const c = await watch('/macro/series/72/data');
    await c.nth(1, (e) => e.event === 'error' && e.json().retrying === true, 'the retrying event');
    // The vendor rate-limits the next call (a retry) for 2 s: no call during it, then the answer.
    vendor.rateLimitOnce('/series/72/data', 2);
    const limitedAt = await eventually(() => vendor.limitedAt, { what: 'the rate-limited retry' });
    const answer = await c.nth(1, (e) => e.event === 'answer', 'the answer after the cooldown');
    expect(answer.json().body).toEqual({ data: [{ value: 9 }] });
    const after = vendor.times.get('/series/72/data')!.filter((t) => t > limitedAt);
    process.stderr.write(
      `[watch figures] a retry met a 2 s cooldown: next vendor call ${after[0] - limitedAt} ms after the 429\n`,
    );
    expect(after[0] - limitedAt).toBeGreaterThanOrEqual(1900);
  });
});
