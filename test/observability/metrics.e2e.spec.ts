import { randomBytes } from 'node:crypto';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { type GatewayHandle, http, startGateway, withGateway } from '../helpers/gateway.js';
import { parsePrometheusText, sum, type ParsedMetrics } from './prometheus-text.js';

const UPSTREAM_TOKEN = 'sbx_macro_metrics_test_token_51d2';
const METRICS_TOKEN = 'metrics-scrape-token-7f2b9c41d0e8';

describe('GET /metrics', () => {
  const reader = testConsumer({ id: 'metrics-reader', upstreams: new Set(['macro']) });
  const outsider = testConsumer({ id: 'metrics-outsider', upstreams: new Set(['company']) });
  const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
  const gw = withGateway({
    upstreams: { macro: { fake, token: UPSTREAM_TOKEN } },
    env: { UPSTREAM_MACRO_TIMEOUT_MS: '2000' },
    consumers: [reader, outsider],
  });

  const bearer = (key = reader.key) => ({ authorization: `Bearer ${key}` });
  const get = (path: string, headers: Record<string, string> = bearer()) => http(gw.url + path, { headers });
  /** A query parameter that makes a request unique (no cache entry can answer it). */
  const fresh = () => `probe=${randomBytes(4).toString('hex')}`;

  async function scrape(): Promise<ParsedMetrics> {
    const res = await http(gw.url + '/metrics');
    expect(res.status).toBe(200);
    return parsePrometheusText(res.text);
  }

  it('answers Prometheus text without a consumer key, with default process metrics', async () => {
    const res = await http(gw.url + '/metrics');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe('text/plain; version=0.0.4; charset=utf-8');
    const m = parsePrometheusText(res.text);
    for (const name of [
      'process_cpu_user_seconds_total',
      'process_resident_memory_bytes',
      'nodejs_eventloop_lag_seconds',
      'nodejs_heap_size_used_bytes',
    ])
      expect(m.types.has(name)).toBe(true);
    expect(m.types.get('atrium_requests_total')).toBe('counter');
    expect(m.types.get('atrium_request_duration_seconds')).toBe('histogram');
    expect(m.types.get('atrium_upstream_requests_total')).toBe('counter');
    expect(m.types.get('atrium_upstream_duration_seconds')).toBe('histogram');
    expect(m.types.get('atrium_gateway_duration_seconds')).toBe('histogram');
    expect(m.types.get('atrium_key_echo_scrubs_total')).toBe('counter');
    expect(m.types.get('atrium_consumer_requests_total')).toBe('counter');
    // Each registered upstream is visible from the start (zeroed series).
    expect(
      m.samples.some((s) => s.name === 'atrium_key_echo_scrubs_total' && s.labels.upstream === 'macro'),
    ).toBe(true);
  });

  it('counts requests, upstream calls, durations and consumers as requests are served', async () => {
    const before = await scrape();
    for (let i = 0; i < 3; i++) expect((await get(`/macro/feeds?limit=1&${fresh()}`)).status).toBe(200);
    const calls = fake.requests.length;
    expect(calls).toBe(3);
    const after = await scrape();
    const route = { upstream: 'macro', route: 'macro.feeds.list' };
    const delta = (name: string, labels: Record<string, string>) =>
      sum(after, name, labels) - sum(before, name, labels);
    expect(delta('atrium_requests_total', { ...route, status_class: '2xx' })).toBe(3);
    expect(delta('atrium_request_duration_seconds_count', route)).toBe(3);
    expect(delta('atrium_request_duration_seconds_sum', route)).toBeGreaterThan(0);
    expect(delta('atrium_upstream_requests_total', { ...route, status_class: '2xx' })).toBe(calls);
    expect(delta('atrium_upstream_duration_seconds_count', { upstream: 'macro' })).toBe(calls);
    expect(delta('atrium_gateway_duration_seconds_count', { upstream: 'macro' })).toBe(3);
    expect(delta('atrium_consumer_requests_total', { consumer: 'metrics-reader', upstream: 'macro' })).toBe(
      3,
    );
    // Gateway time and upstream time are reported separately; upstream time is part of the total.
    expect(delta('atrium_upstream_duration_seconds_sum', { upstream: 'macro' })).toBeLessThan(
      delta('atrium_request_duration_seconds_sum', route),
    );
  });

  it('counts 401 and 403 by route and status class, with no upstream call', async () => {
    const before = await scrape();
    expect((await get('/macro/feeds', {})).status).toBe(401);
    expect((await get('/macro/feeds', bearer('atr_not_a_real_key_424242'))).status).toBe(401);
    expect((await get('/macro/feeds', bearer(outsider.key))).status).toBe(403);
    const after = await scrape();
    const labels = { upstream: 'macro', route: 'macro.feeds.list', status_class: '4xx' };
    expect(sum(after, 'atrium_requests_total', labels) - sum(before, 'atrium_requests_total', labels)).toBe(
      3,
    );
    expect(fake.requests).toHaveLength(0);
    expect(sum(after, 'atrium_upstream_requests_total') - sum(before, 'atrium_upstream_requests_total')).toBe(
      0,
    );
  });

  it('counts upstream calls that got no answer as status class "none"', async () => {
    const before = await scrape();
    fake.behave({ resetConnections: {} });
    expect((await get(`/macro/dictionary/geo?${fresh()}`)).status).toBe(503);
    const after = await scrape();
    const route = { upstream: 'macro', route: 'macro.dictionary.geo' };
    const delta = (name: string, labels: Record<string, string>) =>
      sum(after, name, labels) - sum(before, name, labels);
    // Each attempt (the retry stage makes up to three) is one upstream call without an answer.
    expect(
      delta('atrium_upstream_requests_total', { ...route, status_class: 'none' }),
    ).toBeGreaterThanOrEqual(1);
    expect(delta('atrium_upstream_requests_total', { ...route, status_class: '2xx' })).toBe(0);
    expect(delta('atrium_requests_total', { ...route, status_class: '5xx' })).toBe(1);
  });

  it('counts key-echo scrubs per upstream', async () => {
    const before = await scrape();
    fake.behave({ echoCredential: true });
    const res = await get(`/macro/feeds?limit=1&${fresh()}`);
    expect(res.status).toBe(200);
    expect(res.text).not.toContain(UPSTREAM_TOKEN);
    const after = await scrape();
    const labels = { upstream: 'macro' };
    expect(
      sum(after, 'atrium_key_echo_scrubs_total', labels) -
        sum(before, 'atrium_key_echo_scrubs_total', labels),
    ).toBeGreaterThanOrEqual(1);
  });

  it('counts cache hits by outcome: the second identical GET is a hit, counted on both metrics', async () => {
    const path = `/macro/dictionary/frequencies?${fresh()}`;
    const before = await scrape();
    const first = await get(path);
    const second = await get(path);
    expect([first.status, second.status]).toEqual([200, 200]);
    const after = await scrape();
    expect(after.types.has('atrium_cache_events_total')).toBe(true);
    expect(second.headers['x-cache']).toBe('HIT');
    const hit = { upstream: 'macro', outcome: 'hit' };
    expect(sum(after, 'atrium_cache_events_total', hit) - sum(before, 'atrium_cache_events_total', hit)).toBe(
      1,
    );
    const labels = { upstream: 'macro', route: 'macro.dictionary.frequencies', cache: 'hit' };
    expect(sum(after, 'atrium_requests_total', labels) - sum(before, 'atrium_requests_total', labels)).toBe(
      1,
    );
  });

  it('keeps labels bounded: route ids and route patterns, never raw paths, ids or keys', async () => {
    const id = `ID${randomBytes(6).toString('hex')}`;
    await get(`/macro/series/${id}/data?count=1`);
    await get(`/macro/layout/tables/${id}`);
    await get(`/no/such/${id}`);
    await get(`/macro/feeds?token=${reader.key}`, {});
    const res = await http(gw.url + '/metrics');
    expect(res.text).not.toContain(id);
    expect(res.text).not.toContain(reader.key);
    expect(res.text).not.toContain(UPSTREAM_TOKEN);
    const m = parsePrometheusText(res.text);
    for (const s of m.samples) {
      if (s.labels.route !== undefined)
        expect(s.labels.route).toMatch(/^(macro(\.[a-z_]+)+|\/[A-Za-z0-9/_:*.-]*|unmatched)$/);
      if (s.labels.status_class !== undefined) expect(s.labels.status_class).toMatch(/^([1-5]xx|none)$/);
    }
    expect(sum(m, 'atrium_requests_total', { upstream: 'none', route: 'unmatched' })).toBeGreaterThanOrEqual(
      1,
    );
  });
});

describe('GET /metrics behind ATRIUM_METRICS_TOKEN', () => {
  let gw: GatewayHandle;
  beforeAll(async () => {
    gw = await startGateway({ env: { ATRIUM_METRICS_TOKEN: METRICS_TOKEN }, consumers: [] });
  });
  afterAll(async () => gw?.close());

  it('refuses a scrape without the token or with a wrong one, in the error envelope', async () => {
    const none = await http(gw.url + '/metrics');
    expect(none.status).toBe(401);
    expect(none.json().error.code).toBe('UNAUTHENTICATED');
    const wrong = await http(gw.url + '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}x` } });
    expect(wrong.status).toBe(401);
    expect(wrong.text).not.toContain(METRICS_TOKEN);
  });

  it('serves the scrape with the token', async () => {
    const ok = await http(gw.url + '/metrics', { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(ok.status).toBe(200);
    expect(parsePrometheusText(ok.text).types.has('atrium_requests_total')).toBe(true);
  });
});

describe('the Prometheus text parser used above', () => {
  it('rejects what Prometheus would reject', () => {
    expect(() => parsePrometheusText('a_total 1\n')).toThrow(/no # TYPE/);
    expect(() => parsePrometheusText('# TYPE a counter\na{x="1} 1\n')).toThrow();
    expect(() => parsePrometheusText('# TYPE a counter\na 1')).toThrow(/newline/);
    expect(() => parsePrometheusText('# TYPE a counter\na one\n')).toThrow(/bad value/);
    expect(() =>
      parsePrometheusText('# TYPE h histogram\nh_bucket{le="1"} 2\nh_bucket{le="+Inf"} 1\nh_count 1\n'),
    ).toThrow(/cumulative/);
    const ok = parsePrometheusText('# HELP a x\n# TYPE a counter\na{b="q\\"x"} 2\n');
    expect(ok.samples[0]).toEqual({ name: 'a', labels: { b: 'q"x' }, value: 2 });
  });
});
