import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, withGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/eventually.js';

const UPSTREAM_TOKEN = 'sbx_macro_oversize_secret_71c4';
const CAP = 256 * 1024;

/**
 * An answer over the size cap is the request's fault: the same request fails the same way, so it is
 * refused as one to narrow (429 RESPONSE_TOO_LARGE, not retryable), with retries, a stale entry and the
 * breaker all in place, and the vendor is asked exactly once.
 */
describe('an oversize vendor answer with retries and the cache on', () => {
  const reader = testConsumer({ id: 'reader', upstreams: new Set(['macro']) });
  const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
  const gw = withGateway({
    upstreams: { macro: { fake, token: UPSTREAM_TOKEN } },
    env: {
      ATRIUM_MAX_RESPONSE_BYTES: String(CAP),
      UPSTREAM_MACRO_RETRY_ATTEMPTS: '3',
      UPSTREAM_MACRO_RETRY_BASE_MS: '1',
      UPSTREAM_MACRO_RETRY_MAX_BACKOFF_MS: '5',
      UPSTREAM_MACRO_RETRY_BUDGET_RATIO: '1',
      UPSTREAM_MACRO_BREAKER_MIN_SAMPLE: '1000',
      ATRIUM_CACHE_TTL_OVERRIDES: 'dictionary=200ms',
      ATRIUM_CACHE_STALE_WHILE_REVALIDATE_MS: '0',
      ATRIUM_CACHE_STALE_IF_ERROR_MS: '600000',
    },
    consumers: [reader],
  });
  const get = (path: string, headers: Record<string, string> = {}) =>
    http(gw.url + path, { headers: { authorization: `Bearer ${reader.key}`, ...headers } });
  let warm = 0;
  beforeEach(async () => {
    // The retry budget allows retries up to the recent first calls: six ordinary calls first leave it room
    // for every retry a test could provoke, so a retry not made is one the gateway chose not to make.
    for (let i = 0; i < 6; i++)
      expect((await get(`/macro/dictionary/units?warm=${warm++}`)).status).toBe(200);
    fake.reset();
  });

  it('retries are on here: a vendor 503 is asked three times', async () => {
    fake.behave({ failWith: { status: 503 } });
    const res = await get('/macro/dictionary/units?run=retried');
    expect(res.status).toBe(502);
    expect(fake.calls('/dictionary/units')).toBe(3);
  });

  it.each([
    ['JSON', {}, ''],
    ['XML by Accept', { accept: 'application/xml' }, ''],
    ['XML by format=xml', {}, '&format=xml'],
  ] as const)(
    '429 RESPONSE_TOO_LARGE in %s, not retryable, asked of the vendor once',
    async (_n, headers, q) => {
      fake.behave({ oversizeBytes: 2 * CAP });
      const res = await get(`/macro/dictionary/units?run=oversize${q}`, headers);
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toBeUndefined();
      expect(res.headers['x-cache']).not.toBe('STALE');
      expect(fake.calls('/dictionary/units')).toBe(1);
      if (res.headers['content-type']?.startsWith('application/json')) {
        expect(q).toBe('');
        expect('accept' in headers).toBe(false);
        const body = res.json();
        expect(body.error).toMatchObject({ code: 'RESPONSE_TOO_LARGE', status: 429, retryable: false });
        expect(body.error.message).toMatch(/narrow the request/);
        expect(body.errors).toMatchObject({ status: 429, code: 'RESPONSE_TOO_LARGE' });
      } else {
        expect(res.headers['content-type']).toMatch(/^application\/xml/);
        expect(res.text).toContain('<code>RESPONSE_TOO_LARGE</code>');
        expect(res.text).toContain('<retryable>false</retryable>');
        expect(res.text).toMatch(/narrow the request/);
      }
    },
  );

  it('a stale entry is not served in its place (waiting would not help), and nothing is retried', async () => {
    const path = '/macro/dictionary/units?run=stale';
    const fresh = await get(path);
    expect(fresh.status).toBe(200);
    expect(fresh.headers['x-cache']).toBe('MISS');
    // The entry turns stale 200 ms after it was stored (before it was sent): the stale-if-error window runs.
    const storedBy = Date.now();
    await eventually(() => Date.now() - storedBy > 200, { intervalMs: 10, what: 'the entry stale' });
    // The same setup serves the stale entry for a retryable failure…
    fake.behave({ failWith: { status: 503 } });
    const onFailure = await get(path);
    expect(onFailure.headers['x-cache']).toBe('STALE');
    fake.reset();
    // …but not for an answer that is too large.
    fake.behave({ oversizeBytes: 2 * CAP });
    const res = await get(path);
    expect(res.status).toBe(429);
    expect(res.json().error).toMatchObject({ code: 'RESPONSE_TOO_LARGE', retryable: false });
    expect(fake.calls('/dictionary/units')).toBe(1);
  });
});
