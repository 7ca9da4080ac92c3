import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, withGateway } from '../helpers/gateway.js';

const UPSTREAM_TOKEN = 'sbx_macro_conditional_secret_41ab';

/** ETag, 304 and Cache-Control on cached proxy routes, asserted on what the vendor saw. */
describe('conditional GETs on cached proxy routes', () => {
  const reader = testConsumer({ id: 'reader', upstreams: new Set(['macro']) });
  const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
  const gw = withGateway({
    upstreams: { macro: { fake, token: UPSTREAM_TOKEN } },
    env: { UPSTREAM_MACRO_RETRY_ATTEMPTS: '1', ATRIUM_CACHE_TTL_OVERRIDES: 'layout=60s' },
    consumers: [reader],
  });
  const get = (path: string, headers: Record<string, string> = {}) =>
    http(gw.url + path, { headers: { authorization: `Bearer ${reader.key}`, ...headers } });
  const TABLE = '/macro/layout/tables/TB1207';

  it('a cached answer carries a strong ETag of its bytes and a private max-age of its time left', async () => {
    const miss = await get(TABLE);
    expect(miss.status).toBe(200);
    expect(miss.headers['x-cache']).toBe('MISS');
    expect(miss.headers.etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    expect(miss.headers['cache-control']).toBe('private, max-age=60');
    const hit = await get(TABLE);
    expect(hit.headers['x-cache']).toBe('HIT');
    expect(hit.text).toBe(miss.text);
    expect(hit.headers.etag).toBe(miss.headers.etag);
    const maxAge = Number(/^private, max-age=(\d+)$/.exec(hit.headers['cache-control'])?.[1]);
    expect(maxAge).toBeLessThanOrEqual(60);
    expect(maxAge).toBeGreaterThan(50);
    expect(fake.requests).toHaveLength(1);
  });

  it('If-None-Match with the ETag is a 304 without a body and without a vendor call', async () => {
    const first = await get(TABLE);
    const etag = first.headers.etag;
    const vendorCalls = fake.requests.length;
    for (const inm of [etag, `W/${etag}`, `"other", ${etag}`, '*']) {
      const again = await get(TABLE, { 'if-none-match': inm });
      expect(again.status).toBe(304);
      expect(again.text).toBe('');
      expect(again.headers.etag).toBe(etag);
      expect(again.headers['cache-control']).toMatch(/^private, max-age=\d+$/);
      expect(again.headers['content-type']).toBeUndefined();
    }
    expect(fake.requests).toHaveLength(vendorCalls);
    // Another validator is not a match: the whole answer, still from the cache.
    const changed = await get(TABLE, { 'if-none-match': '"stale-validator"' });
    expect(changed.status).toBe(200);
    expect(changed.text).toBe(first.text);
    expect(fake.requests).toHaveLength(vendorCalls);
  });

  it('a fields= selection has its own ETag, over the selected bytes, and revalidates too', async () => {
    const whole = await get(TABLE);
    const part = await get(`${TABLE}?fields=data.id`);
    expect(part.status).toBe(200);
    expect(part.headers.etag).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
    expect(part.headers.etag).not.toBe(whole.headers.etag);
    const again = await get(`${TABLE}?fields=data.id`, { 'if-none-match': part.headers.etag });
    expect(again.status).toBe(304);
  });

  it('a file route (streamed, never cached) gets no validator or max-age of ours', async () => {
    const file = await get('/macro/series/310112/visual');
    expect(file.status).toBe(200);
    expect(file.headers['content-type']).toBe('image/png');
    expect(file.headers['cache-control']).toBeUndefined();
    expect(file.headers.etag).toBeUndefined();
    const again = await get('/macro/series/310112/visual', { 'if-none-match': '*' });
    expect(again.status).toBe(200);
    expect(fake.requests).toHaveLength(2);
  });
});
