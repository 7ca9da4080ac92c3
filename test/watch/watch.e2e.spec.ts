import { Agent, fetch as undiciFetch } from 'undici';
import { watch as watchWith, type WatchAnswer } from '../../client/index.js';
import type { AtriumErrorBody } from '../../client/runtime.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { SseClient, type SseEvent } from '../helpers/sse.js';
import { withGateway } from '../helpers/gateway.js';
import { ScriptedVendor } from '../helpers/scripted-vendor.js';
import { twoSeriesViewsFile } from '../helpers/watch-release.js';

/**
 * `GET /watch` on one gateway (no Redis: it polls for itself) in front of a vendor whose answers the test
 * sets: the first event is the current answer with its ETag as the id, a change at the vendor arrives as a
 * new event with a new id, a reconnect with Last-Event-ID resumes, refused paths come first as `error`
 * events with the envelope, heartbeats flow, and the caps answer with the envelope before any stream.
 */
const views = twoSeriesViewsFile('atrium-watch-');
afterAll(() => views.remove());

const TTL_MS = 400;
const settings = {
  ATRIUM_CACHE_TTL_OVERRIDES: `series=${TTL_MS}ms`,
  ATRIUM_WATCH_MIN_INTERVAL_MS: '50',
  ATRIUM_WATCH_HEARTBEAT_MS: '150',
  ATRIUM_WATCH_LEASE_MS: '600',
  ATRIUM_VIEWS_FILE: views.file,
};
const enc = encodeURIComponent;
const answerEvents = (e: SseEvent) => e.event === 'answer';

describe('GET /watch: answers, changes, resumes, refusals (one gateway)', () => {
  const vendor = new ScriptedVendor();
  const all = testConsumer({ id: 'watcher' });
  const noMacro = testConsumer({ id: 'watcher-no-macro', upstreams: new Set(['company']) });
  const gw = withGateway({
    upstreams: { macro: { fake: vendor, token: 'sbx_test_macro_watch_vendor' } },
    consumers: [all, noMacro],
    env: settings,
  });
  const open: SseClient[] = [];
  const watch = async (paths: string[], key: string, headers: Record<string, string> = {}) => {
    const c = await SseClient.open(`${gw.url}/watch?${paths.map((p) => `path=${enc(p)}`).join('&')}`, {
      authorization: `Bearer ${key}`,
      ...headers,
    });
    open.push(c);
    return c;
  };
  afterEach(async () => {
    for (const c of open.splice(0)) c.close();
    // The server sees each close: no stream is left for the next test.
    await eventually(
      async () =>
        / 0$/m.test(
          (await gw.request('/metrics')).text.split('\n').find((l) => l.startsWith('atrium_watch_streams '))!,
        ),
      { what: 'streams closed' },
    );
  });

  it('sends the current answer with its ETag as the id, then each change with a new id', async () => {
    vendor.set('/series/11/data', 1);
    const c = await watch(['/macro/series/11/data'], all.key);
    expect(c.status).toBe(200);
    expect(c.headers['content-type']).toMatch(/^text\/event-stream/);
    const first = await c.nth(1, answerEvents);
    expect(first.json()).toMatchObject({
      path: '/macro/series/11/data',
      status: 200,
      body: { data: [{ value: 1 }] },
    });
    expect(first.id).toBe(first.json().etag);
    expect(first.id).toMatch(/^"[\w-]{32}"$/);
    vendor.set('/series/11/data', 2);
    const second = await c.nth(2, answerEvents, 'the change');
    expect(second.json().body).toEqual({ data: [{ value: 2 }] });
    expect(second.id).not.toBe(first.id);
    // The only events are the two answers: no duplicate for an unchanged poll.
    await eventually(() => vendor.callsTo('/series/11/data') >= 4, { what: 'more polls' });
    expect(c.events.filter(answerEvents)).toHaveLength(2);
  });

  it('a reconnect with Last-Event-ID gets only the ETag when nothing changed, the answer when it did', async () => {
    vendor.set('/series/12/data', 5);
    const a = await watch(['/macro/series/12/data'], all.key);
    const first = await a.nth(1, answerEvents);
    a.close();
    const same = await watch(['/macro/series/12/data'], all.key, { 'last-event-id': first.id! });
    const resumed = await same.nth(1);
    expect(resumed.event).toBe('unchanged');
    expect(resumed.json()).toEqual({ path: '/macro/series/12/data', etag: first.id });
    expect(resumed.id).toBe(first.id);
    same.close();
    // A change while the client was away: its reconnect gets the new answer, not a gap.
    vendor.set('/series/12/data', 6);
    await eventually(
      async () => (await gw.request('/macro/series/12/data', all.key)).json().data[0].value === 6,
      {
        what: 'the new value cached',
      },
    );
    const later = await watch(['/macro/series/12/data'], all.key, { 'last-event-id': first.id! });
    const missed = await later.nth(1);
    expect(missed.event).toBe('answer');
    expect(missed.json().body).toEqual({ data: [{ value: 6 }] });
    expect(missed.id).not.toBe(first.id);
  });

  it('refuses, in the first events, a path the consumer may not read, an unknown one and an uncacheable one', async () => {
    vendor.set('/series/13/data', 7);
    const c = await watch(['/macro/series/13/data', '/nowhere/at/all', '/macro/series/13/visual'], all.key);
    const first = await c.nth(1);
    expect(first.event).toBe('error');
    expect(first.json()).toMatchObject({
      path: '/nowhere/at/all',
      error: { code: 'NOT_FOUND', status: 404 },
    });
    const second = await c.nth(2);
    expect(second.json()).toMatchObject({
      path: '/macro/series/13/visual',
      error: { code: 'VALIDATION_FAILED', status: 400, message: expect.stringContaining('never cached') },
    });
    const third = await c.nth(3);
    expect(third.event).toBe('answer');
    // Three paths: the id lists their ETags in order, '' for the refused ones.
    expect(third.id).toBe(`${third.json().etag},,`);

    const denied = await watch(['/macro/series/14/data'], noMacro.key);
    const refusal = await denied.nth(1);
    expect(refusal.event).toBe('error');
    expect(refusal.json()).toMatchObject({
      path: '/macro/series/14/data',
      error: { code: 'FORBIDDEN', status: 403 },
    });
    // Nothing else to watch: the stream ends, and the vendor was never asked for it (the first stream
    // still polls series 13 meanwhile, so the vendor's total is no measure).
    await eventually(() => denied.ended, { what: 'the stream to end' });
    expect(denied.events).toHaveLength(1);
    expect(vendor.callsTo('/series/14/data')).toBe(0);
  });

  it('watches a view with its parameters and fields=, and sends heartbeats while nothing changes', async () => {
    vendor.set('/series/21/data', 1);
    vendor.set('/series/22/data', 2);
    const c = await watch(['/views/two-series?a=21&b=22&fields=a'], all.key);
    const first = await c.nth(1, answerEvents);
    expect(first.json().body.data).toEqual({ a: { data: [{ value: 1 }] } });
    // b is not in fields=: its change is no change of this answer.
    vendor.set('/series/22/data', 3);
    await eventually(() => vendor.callsTo('/series/22/data') >= 3, { what: 'polls of b' });
    expect(c.events.filter(answerEvents)).toHaveLength(1);
    expect(c.comments).toBeGreaterThan(0);
    vendor.set('/series/21/data', 4);
    const second = await c.nth(2, answerEvents, 'the change of a');
    expect(second.json().body.data).toEqual({ a: { data: [{ value: 4 }] } });
  });

  it('answers an unusable request with the envelope before any stream', async () => {
    const none = await watch([], all.key);
    expect(none.status).toBe(400);
    expect(JSON.parse(none.text).error.code).toBe('VALIDATION_FAILED');
    const anon = await SseClient.open(`${gw.url}/watch?path=${enc('/macro/series/1/data')}`, {});
    expect(anon.status).toBe(401);
    const json = await watch(['/macro/series/1/data'], all.key, { accept: 'application/json' });
    expect(json.status).toBe(415);
  });

  it('the typed client’s watch() hands a page each answer and each refusal, and stops on close()', async () => {
    vendor.set('/series/41/data', 1);
    const answers: WatchAnswer[] = [];
    const refused: Array<[string, AtriumErrorBody]> = [];
    // Its own pool, closed at the end: no idle socket of it outlives the test.
    const agent = new Agent();
    const fetch = ((url: string, init: object) =>
      undiciFetch(url, { ...init, dispatcher: agent })) as unknown as typeof globalThis.fetch;
    const w = watchWith(
      { baseUrl: gw.url, apiKey: all.key, fetch },
      ['/macro/series/41/data', '/macro/series/41/visual'],
      {
        onAnswer: (a) => answers.push(a),
        onRefused: (path, error) => refused.push([path, error]),
      },
    );
    try {
      await eventually(() => answers.length === 1, { what: 'the first answer' });
      expect(answers[0]).toMatchObject({ path: '/macro/series/41/data', body: { data: [{ value: 1 }] } });
      expect(refused).toEqual([
        ['/macro/series/41/visual', expect.objectContaining({ code: 'VALIDATION_FAILED' })],
      ]);
      vendor.set('/series/41/data', 2);
      await eventually(() => answers.length === 2, { what: 'the change' });
      expect(answers[1].body).toEqual({ data: [{ value: 2 }] });
      expect(w.lastEventId).toBe(`${answers[1].etag},`);
    } finally {
      w.close();
      await agent.destroy();
    }
  });

  it('counts streams, resources, polls and pushes in the metrics', async () => {
    vendor.set('/series/31/data', 1);
    const c = await watch(['/macro/series/31/data'], all.key);
    await c.nth(1, answerEvents);
    vendor.set('/series/31/data', 2);
    await c.nth(2, answerEvents);
    const text = (await gw.request('/metrics')).text;
    expect(text).toMatch(/^atrium_watch_streams 1$/m);
    expect(text).toMatch(/^atrium_watch_resources\{role="held"\} 1$/m);
    expect(text).toMatch(/^atrium_watch_polls_total\{outcome="changed"\} [1-9]/m);
    expect(text).toMatch(/^atrium_watch_pushes_total [1-9]/m);
    // The polls' vendor calls are counted under the poller's own heading in the usage, not a watcher's.
    expect(text).toMatch(/^atrium_consumer_vendor_calls_total\{[^}]*consumer="watch"[^}]*\} [1-9]/m);
  });
});

describe('GET /watch: caps per consumer and per replica', () => {
  const vendor = new ScriptedVendor();
  const a = testConsumer({ id: 'cap-a' });
  const b = testConsumer({ id: 'cap-b' });
  const gw = withGateway({
    upstreams: { macro: { fake: vendor, token: 'sbx_test_macro_watch_vendor' } },
    consumers: [a, b],
    env: { ...settings, ATRIUM_WATCH_MAX_PATHS_PER_CONSUMER: '2', ATRIUM_WATCH_MAX_STREAMS: '2' },
  });
  const url = (...ids: number[]) =>
    `${gw.url}/watch?${ids.map((i) => `path=${enc(`/macro/series/${i}/data`)}`).join('&')}`;

  it('past the paths of a consumer: 429 WATCH_LIMIT_REACHED; past the streams of a replica: 503 WATCH_STREAMS_FULL', async () => {
    const first = await SseClient.open(url(1, 2), { authorization: `Bearer ${a.key}` });
    await first.nth(2);
    const more = await SseClient.open(url(3), { authorization: `Bearer ${a.key}` });
    expect(more.status).toBe(429);
    expect(JSON.parse(more.text).error).toMatchObject({ code: 'WATCH_LIMIT_REACHED', retryable: true });
    const second = await SseClient.open(url(4), { authorization: `Bearer ${b.key}` });
    await second.nth(1);
    const third = await SseClient.open(url(5), { authorization: `Bearer ${b.key}` });
    expect(third.status).toBe(503);
    expect(JSON.parse(third.text).error).toMatchObject({ code: 'WATCH_STREAMS_FULL' });
    // Closing a stream gives its paths back.
    first.close();
    const again = await eventually(
      async () => {
        const c = await SseClient.open(url(3), { authorization: `Bearer ${a.key}` });
        if (c.status === 200) return c;
        return undefined;
      },
      { what: 'a stream after one closed' },
    );
    await again.nth(1);
    again.close();
    second.close();
  });

  it('polls wait out a vendor cooldown (429 with Retry-After) and resume after it', async () => {
    await eventually(async () => /^atrium_watch_streams 0$/m.test((await gw.request('/metrics')).text), {
      what: 'the other streams closed',
    });
    vendor.set('/series/61/data', 1);
    vendor.set('/series/62/data', 1);
    const c = await SseClient.open(url(61, 62), { authorization: `Bearer ${a.key}` });
    await c.nth(2);
    vendor.rateLimitOnce('/series/61/data', 2);
    const limitedAt = await eventually(() => vendor.limitedAt, { what: 'the rate-limited poll' });
    vendor.set('/series/61/data', 2);
    vendor.set('/series/62/data', 2);
    const changed = await c.nth(
      2,
      (e) => e.event === 'answer' && e.json().path.includes('/61/'),
      'a change of 61',
    );
    expect(changed.json().body).toEqual({ data: [{ value: 2 }] });
    await c.nth(2, (e) => e.event === 'answer' && e.json().path.includes('/62/'), 'the change of 62');
    // Nothing reached the vendor while it cooled down (2 s, less a margin for the clock reads): not the
    // limited resource, and not the other one of the same interface, whose polls were put off. (A poll of
    // the other one sent in the same tick as the limited one may arrive just after the 429: in flight, it
    // was admitted before anyone knew; the first 100 ms are left out for it.)
    for (const id of [61, 62]) {
      const during = vendor.times
        .get(`/series/${id}/data`)!
        .filter((t) => t > limitedAt + 100 && t < limitedAt + 1900);
      expect([id, during]).toEqual([id, []]);
    }
    expect((await gw.request('/metrics')).text).toMatch(
      /^atrium_watch_polls_total\{outcome="deferred"\} [1-9]/m,
    );
    c.close();
  });
});
