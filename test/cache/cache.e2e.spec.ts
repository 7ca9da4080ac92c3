import type { Registry } from 'prom-client';
import { METRICS_REGISTRY } from '../../src/core/ports/metrics.port.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, startGateway, withGateway } from '../helpers/gateway.js';
import { burst, sha256Hex } from '../helpers/burst.js';
import { eventually } from '../helpers/eventually.js';

const UPSTREAM_TOKEN = 'sbx_macro_cache_secret_7c1d';
const ADMIN_TOKEN = 'adm_' + 'a1b2c3d4e5f6a7b8c9d0';

describe('response cache through the whole gateway (memory store)', () => {
  const reader = testConsumer({ id: 'reader', upstreams: new Set(['macro']) });
  const other = testConsumer({ id: 'other-app', upstreams: new Set(['macro']) });
  const writer = testConsumer({ id: 'writer', upstreams: new Set(['macro']), write: true });
  const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
  const gw = withGateway({
    upstreams: { macro: { fake, token: UPSTREAM_TOKEN } },
    env: {
      UPSTREAM_MACRO_TIMEOUT_MS: '8000',
      UPSTREAM_MACRO_CONNECTIONS: '8',
      // Each test counts upstream calls itself: retries, the breaker and the budget have their own suites.
      UPSTREAM_MACRO_RETRY_ATTEMPTS: '1',
      UPSTREAM_MACRO_BREAKER_MIN_SAMPLE: '1000',
      UPSTREAM_MACRO_RATE_PER_SEC: '10000',
      UPSTREAM_MACRO_BURST: '10000',
      ATRIUM_CACHE_TTL_OVERRIDES: 'dictionary=300ms',
      ATRIUM_CACHE_STALE_WHILE_REVALIDATE_MS: '0',
      ATRIUM_CACHE_STALE_IF_ERROR_MS: '2500',
      ATRIUM_CACHE_MAX_ENTRY_BYTES: String(128 * 1024),
      ATRIUM_ADMIN_TOKEN: ADMIN_TOKEN,
    },
    consumers: [reader, other, writer],
    // 1,000 clients connecting in the same instant overflow Node's default accept backlog of 511.
    backlog: 2048,
    // Tests stop the fake; the beforeEach below restarts it before resetting it.
    resetFakes: false,
  });
  beforeEach(async () => {
    if (!fake.listening) await fake.restart();
    fake.reset();
    const purge = await admin('/admin/cache/purge', { upstream: 'macro' });
    expect(purge.status).toBe(200);
  });

  const bearer = (key = reader.key) => ({ authorization: `Bearer ${key}` });
  const get = (path: string, headers: Record<string, string> = bearer()) => http(gw.url + path, { headers });
  function admin(path: string, body?: object, token = ADMIN_TOKEN) {
    return http(gw.url + path, {
      method: body ? 'POST' : 'GET',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
      body: body ? JSON.stringify(body) : undefined,
    });
  }

  it('MISS then HIT: same status, content type and bytes; Age on the hit; our key never in a response', async () => {
    const miss = await get('/macro/layout/tables/TB1207');
    expect(miss.status).toBe(200);
    expect(miss.headers['x-cache']).toBe('MISS');
    expect(miss.headers.age).toBeUndefined();
    const hit = await get('/macro/layout/tables/TB1207');
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(hit.headers.age).toBe('0');
    expect(hit.status).toBe(miss.status);
    expect(hit.headers['content-type']).toBe(miss.headers['content-type']);
    expect(hit.text).toBe(miss.text);
    expect(fake.requests).toHaveLength(1);
    expect(hit.text + JSON.stringify(hit.headers)).not.toContain(UPSTREAM_TOKEN);
  });

  it('one entry whatever the consumer key, its position, parameter order or boolean spelling', async () => {
    const base = '/macro/layout/tables/TB1207';
    const variants: Array<[string, Record<string, string>]> = [
      [`${base}?lang=en&with_model_information=true`, bearer()],
      [`${base}?with_model_information=True&lang=en`, { 'x-api-key': reader.key }],
      [`${base}?lang=EN&with_model_information=1`, { authorization: reader.key }],
      [`${base}?with_model_information=TRUE&lang=en&token=${other.key}`, {}],
      [
        `${base}?token=None&lang=en&with_model_information=true`,
        { authorization: other.key, 'accept-language': 'zh-CN,zh;q=0.9' },
      ],
    ];
    const results = [];
    for (const [path, headers] of variants) results.push(await get(path, headers));
    expect(results.map((r) => r.status)).toEqual(Array(5).fill(200));
    expect(results.map((r) => r.headers['x-cache'])).toEqual(['MISS', 'HIT', 'HIT', 'HIT', 'HIT']);
    expect(new Set(results.map((r) => r.text)).size).toBe(1);
    expect(fake.requests).toHaveLength(1);
    // A different language or format is a different answer.
    expect((await get(`${base}?lang=zh&with_model_information=true`)).headers['x-cache']).toBe('MISS');
    expect((await get(`${base}?format=xml&with_model_information=true`)).headers['x-cache']).toBe('MISS');
    // The vendor reads lang and format as its headers (spec §4.1): the canonical request sends the headers
    // only, so the header forms are the same call and the same entry.
    expect(
      (await get(`${base}?with_model_information=true`, { ...bearer(), 'accept-language': 'en' })).headers[
        'x-cache'
      ],
    ).toBe('HIT');
    expect(
      (await get(`${base}?with_model_information=true`, { ...bearer(), accept: 'application/xml' })).headers[
        'x-cache'
      ],
    ).toBe('HIT');
    expect(fake.requests).toHaveLength(3);
    expect(fake.requests.map((r) => r.query.filter(([k]) => k !== 'token'))).toEqual([
      [['with_model_information', 'true']],
      [['with_model_information', 'true']],
      [['with_model_information', 'true']],
    ]);
  });

  it('1,000 concurrent identical cold requests: exactly one upstream call, byte-identical bodies', async () => {
    // The upstream answers after 2 s: every request reaches the gateway while the one call is in flight.
    fake.behave({ latencyMs: 2000 });
    const results = await burst([gw.url], '/macro/feeds?limit=3&offset=1', 1000, bearer());
    expect(fake.calls('/feeds')).toBe(1);
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(new Set(results.map((r) => sha256Hex(r.body))).size).toBe(1);
    expect(JSON.parse(results[0].body.toString()).data).toHaveLength(3);
    const outcomes = results.map((r) => r.cache);
    expect(outcomes.filter((c) => c === 'MISS')).toHaveLength(1);
    // Requests that reached the gateway while the call ran waited for it; any later ones (a slow machine) hit
    // the stored answer. Either way none of them called the upstream.
    expect(outcomes.every((c) => c === 'MISS' || c === 'COALESCED' || c === 'HIT')).toBe(true);
    expect(outcomes.filter((c) => c === 'COALESCED').length).toBeGreaterThan(100);
  }, 60_000);

  it('stale-if-error: the fake answering 500, then refusing connections → 200 STALE within the window, the envelope after', async () => {
    const path = '/macro/dictionary/units';
    const freshAt = Date.now();
    const fresh = await get(path);
    expect(fresh.headers['x-cache']).toBe('MISS');
    // The 300 ms TTL must be over (the 2.5 s stale-if-error window then runs). Nothing shows an entry
    // turning stale without refreshing it, so this waits for the time itself to pass: the answer was stored
    // before it was sent, so 300 ms after it arrived the entry is stale.
    const storedBy = Date.now();
    await eventually(() => Date.now() - storedBy > 300, { timeoutMs: 5_000, intervalMs: 10 });
    fake.behave({ failWith: { status: 500 } });
    const on500 = await get(path);
    expect(on500.status).toBe(200);
    expect(on500.headers['x-cache']).toBe('STALE');
    expect(on500.text).toBe(fresh.text);
    expect(fake.requests.length).toBeGreaterThanOrEqual(2);
    await fake.stop();
    const refused = await get(path);
    expect(refused.status).toBe(200);
    expect(refused.headers['x-cache']).toBe('STALE');
    expect(refused.text).toBe(fresh.text);
    // Stale answers go on until TTL + window (300 ms + 2.5 s after the store), then the envelope comes.
    await eventually(async () => (await get(path)).status !== 200, { timeoutMs: 6_000, intervalMs: 100 });
    expect(Date.now() - freshAt).toBeGreaterThanOrEqual(2_800);
    const after = await get(path);
    expect(after.status).toBe(503);
    expect(after.json().error).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', upstream: 'macro' });
    await fake.restart();
    fake.behave({ failWith: { status: 500 } });
    const after500 = await get(path);
    expect(after500.status).toBe(502);
    expect(after500.json().error.code).toBe('UPSTREAM_ERROR');
  });

  it('Cache-Control: no-cache forces a refresh, still coalesced', async () => {
    const path = '/macro/feeds?limit=2';
    await get(path);
    expect((await get(path)).headers['x-cache']).toBe('HIT');
    const forced = await get(path, { ...bearer(), 'cache-control': 'no-cache' });
    expect(forced.headers['x-cache']).toBe('MISS');
    expect(fake.requests).toHaveLength(2);
    fake.behave({ latencyMs: 1000 });
    const many = await burst([gw.url], path, 30, { ...bearer(), 'cache-control': 'no-cache' });
    const refreshes = fake.requests.length - 2;
    // Each upstream call answered one request as MISS; every other request joined a refresh in flight
    // (one refresh when the 30 arrive together; a loaded machine may spread them over two).
    expect(many.filter((r) => r.cache === 'MISS')).toHaveLength(refreshes);
    expect(many.filter((r) => r.cache === 'COALESCED')).toHaveLength(30 - refreshes);
    expect(refreshes).toBeGreaterThanOrEqual(1);
    expect(refreshes).toBeLessThanOrEqual(3);
  });

  it('a successful PATCH on /macro/feeds/{id} drops the cached /macro/feeds* reads; other families stay', async () => {
    const list = await get('/macro/feeds');
    const id: string = list.json().data[0].id;
    await get(`/macro/feeds/${id}`);
    await get('/macro/layout/tables/TB1207');
    expect((await get('/macro/feeds')).headers['x-cache']).toBe('HIT');
    const patch = await http(`${gw.url}/macro/feeds/${id}`, {
      method: 'PATCH',
      headers: { ...bearer(writer.key), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'name=Renamed%20by%20a%20write',
    });
    expect(patch.status).toBe(200);
    expect(patch.headers['x-cache']).toBe('BYPASS');
    const after = await get('/macro/feeds');
    expect(after.headers['x-cache']).toBe('MISS');
    expect(after.text).toContain('Renamed by a write');
    expect((await get(`/macro/feeds/${id}`)).headers['x-cache']).toBe('MISS');
    expect((await get('/macro/layout/tables/TB1207')).headers['x-cache']).toBe('HIT');
  });

  it('answers over the entry size cap are served but not stored; files are never cached', async () => {
    fake.behave({ oversizeBytes: 200 * 1024 });
    const big = await get('/macro/series/search?keyword=big');
    expect(big.status).toBe(200);
    expect(big.text.length).toBeGreaterThan(128 * 1024);
    expect((await get('/macro/series/search?keyword=big')).headers['x-cache']).toBe('MISS');
    fake.reset();
    const file = await get('/macro/series/310901/visual');
    expect(file.status).toBe(200);
    expect(file.headers['x-cache']).toBe('BYPASS');
    expect((await get('/macro/series/310901/visual')).headers['x-cache']).toBe('BYPASS');
    expect(fake.requests).toHaveLength(2);
  });

  it('counts outcomes per upstream on the metrics registry', async () => {
    await get('/macro/layout/tables/TB1');
    await get('/macro/layout/tables/TB1');
    const registry = gw.app.get<Registry>(METRICS_REGISTRY);
    const text = await registry.metrics();
    expect(text).toMatch(/atrium_cache_events_total\{upstream="macro",outcome="hit"\} [1-9]/);
    expect(text).toMatch(/atrium_cache_events_total\{upstream="macro",outcome="miss"\} [1-9]/);
    expect(text).toContain('atrium_cache_redis_errors_total 0');
  });

  describe('admin API', () => {
    it('needs the operator token: none, a consumer key or a wrong token → 401', async () => {
      const none = await http(gw.url + '/admin/cache/purge', {
        method: 'POST',
        body: '{"upstream":"macro"}',
      });
      expect(none.status).toBe(401);
      expect((await admin('/admin/cache/purge', { upstream: 'macro' }, reader.key)).status).toBe(401);
      expect((await admin('/admin/cache/purge', { upstream: 'macro' }, ADMIN_TOKEN + 'x')).status).toBe(401);
      const viaHeader = await http(gw.url + '/admin/cache', { headers: { 'x-admin-token': ADMIN_TOKEN } });
      expect(viaHeader.status).toBe(200);
      expect(viaHeader.json()).toMatchObject({ store: 'memory', available: true });
      expect(JSON.stringify(none.json())).not.toContain(ADMIN_TOKEN);
    });

    it('purges by upstream path prefix or gateway path; validates its input', async () => {
      await get('/macro/feeds');
      await get('/macro/layout/tables/TB1207');
      await get('/macro/layout/tables/TB1207?lang=zh');
      const byPrefix = await admin('/admin/cache/purge', { upstream: 'macro', pathPrefix: '/feeds' });
      expect(byPrefix.json()).toEqual({ upstream: 'macro', pathPrefix: '/feeds', purged: 1 });
      expect((await get('/macro/feeds')).headers['x-cache']).toBe('MISS');
      expect((await get('/macro/layout/tables/TB1207')).headers['x-cache']).toBe('HIT');
      const byPath = await admin('/admin/cache/purge', { path: '/macro/layout/tables' });
      expect(byPath.json()).toEqual({ upstream: 'macro', pathPrefix: '/layout/tables', purged: 2 });
      expect((await get('/macro/layout/tables/TB1207?lang=zh')).headers['x-cache']).toBe('MISS');
      expect((await get('/macro/feeds')).headers['x-cache']).toBe('HIT');
      expect((await admin('/admin/cache/purge', {})).status).toBe(400);
      expect((await admin('/admin/cache/purge', { upstream: 'nope' })).status).toBe(400);
      expect((await admin('/admin/cache/purge', { path: '/nope/x' })).status).toBe(400);
    });

    it('is off without an operator token', async () => {
      const off = await startGateway({
        env: { UPSTREAM_MACRO_BASE_URL: fake.url, UPSTREAM_MACRO_TOKEN: UPSTREAM_TOKEN },
        consumers: [reader.consumer],
      });
      try {
        const res = await http(off.url + '/admin/cache/purge', {
          method: 'POST',
          headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
          body: '{"upstream":"macro"}',
        });
        expect(res.status).toBe(403);
        expect(res.json().error.message).toContain('ATRIUM_OPERATOR_TOKEN');
      } finally {
        await off.close();
      }
    });
  });
});
