import { UpstreamLimitsService } from '../../src/proxy/upstream-limits.service.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, rawGet, withGateway } from '../helpers/gateway.js';

const UPSTREAM_TOKEN = 'sbx_macro_upstream_secret_4f9a2c';

describe('macro interface end to end', () => {
  const reader = testConsumer({ id: 'reader', upstreams: new Set(['macro']) });
  const writer = testConsumer({ id: 'writer', upstreams: new Set(['macro']), write: true });
  const outsider = testConsumer({ id: 'outsider', upstreams: new Set(['company']) });
  const fake = new FakeMacroUpstream({ token: UPSTREAM_TOKEN });
  const gw = withGateway({
    upstreams: { macro: { fake, token: UPSTREAM_TOKEN } },
    env: {
      UPSTREAM_MACRO_TIMEOUT_MS: '800',
      ATRIUM_MAX_RESPONSE_BYTES: String(256 * 1024),
      // This suite checks every call reaching the upstream; the cache has its own suites (test/cache).
      ATRIUM_CACHE_MAX_BYTES: '0',
      // This suite maps single upstream answers; retries and the breaker are tested in test/limits.
      UPSTREAM_MACRO_RETRY_ATTEMPTS: '1',
      UPSTREAM_MACRO_BREAKER_MIN_SAMPLE: '1000',
    },
    consumers: [reader, writer, outsider],
  });

  const get = (path: string, headers: Record<string, string> = {}) => http(gw.url + path, { headers });
  const bearer = (key = reader.key) => ({ authorization: `Bearer ${key}` });

  /** The fake saw exactly our key, once, and nothing of the consumer's. */
  function expectCustody(consumerKey: string) {
    expect(fake.requests).toHaveLength(1);
    const seen = fake.requests[0];
    expect(seen.query.filter(([k]) => k === 'token')).toEqual([['token', UPSTREAM_TOKEN]]);
    expect(seen.url).not.toContain(consumerKey);
    for (const v of Object.values(seen.headers)) expect(String(v)).not.toContain(consumerKey);
    expect(seen.headers.authorization).toBeUndefined();
    expect(seen.headers['x-api-key']).toBeUndefined();
  }

  describe('key custody', () => {
    it.each([
      ['Authorization: Bearer', (k: string) => ({ headers: { authorization: `Bearer ${k}` }, query: '' })],
      ['X-API-Key', (k: string) => ({ headers: { 'x-api-key': k }, query: '' })],
      ['raw Authorization', (k: string) => ({ headers: { authorization: k }, query: '' })],
      ['token query', (k: string) => ({ headers: {}, query: `&token=${k}` })],
      ['sessionId query', (k: string) => ({ headers: {}, query: `&sessionId=${k}` })],
      [
        'header key beside token=None',
        (k: string) => ({ headers: { authorization: k }, query: '&token=None' }),
      ],
    ])('%s: the upstream gets our key, never the consumer’s', async (_name, position) => {
      const p = position(reader.key);
      const res = await get(`/macro/feeds?limit=2${p.query}`, p.headers);
      expect(res.status).toBe(200);
      expect(res.json().data).toHaveLength(2);
      expectCustody(reader.key);
      expect(fake.requests[0].query.some(([, v]) => v === 'None')).toBe(false);
      expect(res.text).not.toContain(UPSTREAM_TOKEN);
      expect(JSON.stringify(res.headers)).not.toContain(UPSTREAM_TOKEN);
    });

    it('a consumer cannot override the injected key with extra token parameters', async () => {
      const res = await get(`/macro/dictionary/units?token=${reader.key}&token=attacker&TOKEN=x&token[0]=y`);
      expect(res.status).toBe(200);
      expectCustody(reader.key);
      expect(fake.requests[0].url).not.toContain('attacker');
      // On a validated route an ambiguous token is refused outright.
      fake.reset();
      const validated = await get(`/macro/feeds?token=${reader.key}&token=attacker`);
      expect(validated.status).toBe(400);
      expect(fake.requests).toHaveLength(0);
    });

    it('scrubs an upstream echo of our key from the answer', async () => {
      fake.behave({ echoCredential: true });
      const res = await get('/macro/feeds?limit=1', bearer());
      expect(res.status).toBe(200);
      expect(fake.requests).toHaveLength(1);
      expect(res.text).not.toContain(UPSTREAM_TOKEN);
      expect(res.text).toContain('[REDACTED]');
    });

    it('no key → 401 envelope with the vendor-shaped errors object; nothing reaches the upstream', async () => {
      const res = await get('/macro/feeds?token=None');
      expect(res.status).toBe(401);
      const body = res.json();
      expect(body.error).toMatchObject({ code: 'UNAUTHENTICATED', status: 401, retryable: false });
      expect(body.errors).toMatchObject({ status: 401, code: 'UNAUTHENTICATED' });
      expect(res.headers['x-request-id']).toBe(body.error.requestId);
      expect(fake.requests).toHaveLength(0);
    });

    it('unknown key → 401; interface not allowed → 403; write not allowed → 403', async () => {
      expect((await get('/macro/feeds', bearer('atr_not_a_real_key_123456'))).status).toBe(401);
      const forbidden = await get('/macro/feeds', bearer(outsider.key));
      expect(forbidden.status).toBe(403);
      expect(forbidden.json().error.code).toBe('FORBIDDEN');
      const write = await http(gw.url + '/macro/feeds', {
        method: 'POST',
        headers: { ...bearer(), 'content-type': 'application/x-www-form-urlencoded' },
        body: 'filter_id=FL-1',
      });
      expect(write.status).toBe(403);
      expect(fake.requests).toHaveLength(0);
    });
  });

  describe('validation before any upstream call', () => {
    it.each([
      [
        'an id of 10,000 characters (the cap is stated)',
        `/macro/layout/tables/${'a'.repeat(10_000)}`,
        'id',
        'Path parameter "id" is 10000 characters long; at most 8192 are accepted.',
      ],
      [
        'an offset of 16 digits',
        '/macro/feeds?offset=1234567890123456',
        'offset',
        'Invalid parameter "offset": offset must have at most 15 digits.',
      ],
      [
        'lang given twice on a validated route',
        '/macro/feeds?lang=en&lang=zh',
        'lang',
        'Invalid parameter "lang": lang must be given once.',
      ],
      [
        'lang given twice on any route',
        '/macro/dictionary/units?lang=en&lang=zh',
        'lang',
        'Invalid parameter "lang": lang must be given once.',
      ],
      [
        'a whitespace-only filter_id (empty, as an empty one is)',
        '/macro/feeds?filter_id=%20%20',
        'filter_id',
        'Invalid parameter "filter_id": filter_id must not be empty.',
      ],
      [
        'a date the vendor would not read (seconds out of range)',
        '/macro/feeds?created_after=2020-01-01T10:00:75',
        'created_after',
        'Invalid parameter "created_after": created_after must be a date: YYYY-MM-DD, YYYYMMDD or YYYY-MM-DDTHH:MM[:SS] with an optional zone.',
      ],
      [
        'a whitespace-only path id (empty, as an empty one is)',
        '/macro/layout/tables/%20%20',
        'id',
        'Path parameter "id" must not be empty.',
      ],
      [
        'an empty status item',
        '/macro/feeds?status=ACTIVE,%20',
        'status',
        'Invalid parameter "status": status must not have empty items.',
      ],
      [
        'a bracketed form the vendor cannot read as a list',
        '/macro/feeds?status[x]=ACTIVE',
        'status',
        'Invalid parameter "status": status is a list: status=a,b, status=a&status=b, status[]=a or status[0]=a.',
      ],
      [
        'a date with an unencoded + before its zone (a space in a query)',
        '/macro/feeds?created_after=2020-01-01T00:00+01:00',
        'created_after',
        'Invalid parameter "created_after": created_after must be a date: YYYY-MM-DD, YYYYMMDD or YYYY-MM-DDTHH:MM[:SS] with an optional zone (a + in a query is read as a space: write the zone as %2B01:00).',
      ],
      [
        '%00 in the path',
        '/macro/layout/tables/TB%001207',
        'path',
        'The path contains an encoded NUL character (%00).',
      ],
    ])('names the real problem: %s', async (_name, path, parameter, message) => {
      const res = await get(path, bearer());
      expect(res.status).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'VALIDATION_FAILED', parameter, message });
      expect(fake.requests).toHaveLength(0);
    });

    it.each([
      ['/macro/feeds?limit=0', 'limit'],
      ['/macro/feeds?limit=101', 'limit'],
      ['/macro/feeds?limit=abc', 'limit'],
      ['/macro/feeds?limit=1&limit=2', 'limit'],
      ['/macro/feeds?offset=-1', 'offset'],
      ['/macro/feeds?offset=1.5', 'offset'],
      // Numbers the vendor may read differently are refused, not forwarded.
      ['/macro/feeds?limit=%2B5', 'limit'],
      ['/macro/feeds?limit=1e2', 'limit'],
      ['/macro/feeds?limit=%205', 'limit'],
      ['/macro/feeds?limit=0x10', 'limit'],
      ['/macro/feeds?offset=1.0', 'offset'],
      ['/macro/feeds?offset=1e1', 'offset'],
      ['/macro/feeds?created_after=2024-13-01', 'created_after'],
      ['/macro/feeds?created_after=yesterday', 'created_after'],
      ['/macro/feeds?created_before=2024-02-30', 'created_before'],
      ['/macro/feeds?created_before=2024-0101', 'created_before'],
      ['/macro/feeds?created_order=UP', 'created_order'],
      ['/macro/feeds?status=ACTIVE%2CGONE', 'status'],
      ['/macro/feeds?status=ACTIVE&status=PAUSED', 'status'],
      ['/macro/feeds?filter_id=', 'filter_id'],
      ['/macro/feeds?with_model_information=yes', 'with_model_information'],
      ['/macro/feeds?lang=fr', 'lang'],
      ['/macro/layout/tables/TB1207?lang=de', 'lang'],
      ['/macro/layout/tables/%20', 'id'],
      ['/macro/layout/tables/TB1?with_model_information=maybe', 'with_model_information'],
      ['/macro/series/..', 'path'],
      ['/macro/series/1%2F2/data', 'path'],
      ['/macro/feeds/%2e%2e/x', 'path'],
      ['/macro/series/1%5C2', 'path'],
    ])('%s → 400 naming %s', async (path, parameter) => {
      const res = await rawGet(gw.url, path, bearer());
      expect(res.status).toBe(400);
      expect(res.json().error).toMatchObject({ code: 'VALIDATION_FAILED', parameter });
      expect(res.json().error.message).toContain(parameter === 'path' ? 'path' : parameter);
      expect(fake.requests).toHaveLength(0);
    });

    it.each([
      ['/macro/feeds?format=csv', {}],
      ['/macro/feeds', { accept: 'text/csv' }],
      ['/macro/layout/tables/TB1207?format=html', {}],
      ['/macro/layout/tables/TB1207', { accept: 'text/html, image/png' }],
    ])('%s %j → 415', async (path, headers) => {
      const res = await get(path, { ...bearer(), ...headers });
      expect(res.status).toBe(415);
      expect(res.json().error.code).toBe('UNSUPPORTED_FORMAT');
      expect(fake.requests).toHaveLength(0);
    });

    it.each([
      '/macro/feeds?created_after=20240101&created_before=2024-12-31T23:59:59',
      '/macro/feeds?status=ACTIVE%2CDELETED&created_order=DESC&offset=0&limit=100',
      '/macro/feeds?status=ACTIVE&status=DELETED&with_model_information=True',
      '/macro/feeds?with_model_information=FALSE&lang=jp&format=json',
      '/macro/layout/tables/TB1207?with_model_information=true&lang=zh',
    ])('accepts %s', async (path) => {
      const res = await get(path, bearer());
      expect(res.status).toBe(200);
      expect(fake.requests).toHaveLength(1);
    });

    it('one rule for lang and format: any case, empty is absent; lang reaches the vendor in lower case', async () => {
      for (const path of [
        '/macro/feeds?lang=EN',
        '/macro/feeds?format=XML',
        '/macro/feeds?lang=',
        '/macro/feeds?format=',
      ]) {
        fake.reset();
        const res = await get(path, bearer());
        expect([path, res.status]).toEqual([path, 200]);
        expect(fake.requests).toHaveLength(1);
      }
      fake.reset();
      await get('/macro/layout/tables/TB1207?lang=ZH', bearer());
      expect(fake.requests[0].headers['accept-language']).toBe('zh');
      // The vendor reads lang as Accept-Language (spec §4.1): only the header form is sent.
      expect(fake.requests[0].query.map(([k]) => k)).toEqual(['token']);
    });

    it('forwards the canonical query, minus credentials: defaults dropped, lists repeated, dates in ISO form', async () => {
      await get(
        `/macro/feeds?token=${reader.key}&offset=0&limit=10&created_after=2024-01-01%2000:00&status[0]=ACTIVE&status[1]=DELETED`,
      );
      expect(fake.requests[0].query).toEqual([
        ['created_after', '2024-01-01T00:00'],
        ['limit', '10'],
        ['status', 'ACTIVE'],
        ['status', 'DELETED'],
        ['token', UPSTREAM_TOKEN],
      ]);
    });

    it('sends every boolean spelling as the value it is keyed by, on feeds and on any macro route', async () => {
      for (const [path, sent] of [
        ['/macro/feeds?with_model_information=1', [['with_model_information', 'true']]],
        ['/macro/feeds?with_model_information=True', [['with_model_information', 'true']]],
        ['/macro/feeds?with_model_information=TRUE', [['with_model_information', 'true']]],
        // false is the stated default: the bare call.
        ['/macro/feeds?with_model_information=0', []],
        ['/macro/feeds?with_model_information=False', []],
        ['/macro/layout/tables/TB1207?with_model_information=1', [['with_model_information', 'true']]],
        ['/macro/dictionary/units?with_model_information=True', [['with_model_information', 'true']]],
      ] as const) {
        fake.reset();
        const res = await get(path, bearer());
        expect([path, res.status]).toEqual([path, 200]);
        expect([path, fake.requests[0].query.filter(([k]) => k !== 'token')]).toEqual([path, sent]);
      }
    });

    it('a date with a space before the time reaches the vendor in the form it reads (it refuses the space)', async () => {
      // The vendor as the sandbox fakes it: `2020-01-01 00:00` sent as written is a 400 there.
      const direct = await http(`${fake.url}/feeds?token=${UPSTREAM_TOKEN}&created_after=2020-01-01%2000:00`);
      expect(direct.status).toBe(400);
      fake.reset();
      const res = await get(
        '/macro/feeds?created_after=2020-01-01%2000:00&created_before=2030-01-01%2012:30:15',
        bearer(),
      );
      expect(res.status).toBe(200);
      expect(fake.requests[0].query.filter(([k]) => k !== 'token')).toEqual([
        ['created_after', '2020-01-01T00:00'],
        ['created_before', '2030-01-01T12:30:15'],
      ]);
    });

    it('negotiates headers the way browsers send them; the query wins over headers', async () => {
      const browser = await get('/macro/layout/tables/TB1207', {
        ...bearer(),
        accept: 'application/json, text/plain, */*',
        'accept-language': 'zh-CN,zh;q=0.9,en;q=0.8',
      });
      expect(browser.status).toBe(200);
      expect(fake.requests[0].headers['accept-language']).toBe('zh');
      expect(fake.requests[0].headers.accept).toBe('application/json');
      fake.reset();
      const fallback = await get('/macro/layout/tables/TB1207', {
        ...bearer(),
        'accept-language': 'fr-FR,de;q=0.5',
      });
      expect(fallback.status).toBe(200);
      expect(fake.requests[0].headers['accept-language']).toBe('en');
      fake.reset();
      await get('/macro/layout/tables/TB1207?lang=ru', { ...bearer(), 'accept-language': 'zh' });
      expect(fake.requests[0].headers['accept-language']).toBe('ru');
    });
  });

  describe('XML', () => {
    it('format=xml reaches the upstream as Accept: application/xml (its header form); the body is XML', async () => {
      const res = await get('/macro/layout/tables/TB1207?format=xml', {
        ...bearer(),
        accept: 'application/json',
      });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toContain('xml');
      expect(res.text).toMatch(/^<\?xml|^<response/);
      expect(fake.requests[0].query.map(([k]) => k)).toEqual(['token']);
      expect(fake.requests[0].headers.accept).toBe('application/xml');
    });

    it('Accept: application/xml reaches the upstream as Accept: application/xml', async () => {
      const res = await get('/macro/feeds?limit=1', { ...bearer(), accept: 'application/xml' });
      expect(res.status).toBe(200);
      expect(res.text).toContain('<');
      expect(fake.requests[0].headers.accept).toBe('application/xml');
    });

    it('errors come back as XML to a client that asked for XML', async () => {
      const res = await get('/macro/feeds?limit=0&format=xml', bearer());
      expect(res.status).toBe(400);
      expect(res.headers['content-type']).toContain('application/xml');
      expect(res.text).toContain('<code>VALIDATION_FAILED</code>');
      const upstream404 = await get('/macro/layout/tables/NOPE?format=xml', bearer());
      expect(upstream404.status).toBe(404);
      expect(upstream404.text).toContain('<code>NOT_FOUND</code>');
    });
  });

  describe('upstream error mapping', () => {
    it.each([
      [400, 'UPSTREAM_BAD_REQUEST', 400],
      [401, 'UPSTREAM_AUTH_FAILED', 502],
      [403, 'UPSTREAM_FORBIDDEN', 403],
      [404, 'NOT_FOUND', 404],
      [500, 'UPSTREAM_ERROR', 502],
      [503, 'UPSTREAM_ERROR', 502],
    ])('upstream %d → %s %d', async (upstreamStatus, code, status) => {
      fake.behave({ failWith: { status: upstreamStatus, times: 1 } });
      const res = await get('/macro/dictionary/units', bearer());
      expect(res.status).toBe(status);
      const body = res.json();
      expect(body.error).toMatchObject({ code, status, upstream: 'macro', upstreamStatus });
      // The vendor's own code where it sent one, never for a rejection of our key.
      expect(body.errors).toMatchObject({
        status,
        code: upstreamStatus === 401 ? code : (body.error.upstreamCode ?? code),
      });
      expect(res.text).not.toContain(UPSTREAM_TOKEN);
    });

    it('the vendor-shaped errors.code carries the vendor code; error.code the gateway one', async () => {
      fake.behave({
        failWith: {
          status: 400,
          body: { errors: { status: 400, code: 'INVALID_SERIES_ID', message: 'Invalid series id' } },
          times: 1,
        },
      });
      const res = await get('/macro/dictionary/units', bearer());
      expect(res.status).toBe(400);
      const body = res.json();
      expect(body.errors).toMatchObject({ status: 400, code: 'INVALID_SERIES_ID' });
      expect(body.error).toMatchObject({ code: 'UPSTREAM_BAD_REQUEST', upstreamCode: 'INVALID_SERIES_ID' });
      // A re-login code of the CEIC facade never reaches a client, whatever the vendor sent.
      fake.behave({
        failWith: {
          status: 401,
          body: {
            errors: { status: 401, code: 'MISSED_API_TOKEN', message: 'Please use access token to get data' },
          },
          times: 1,
        },
      });
      const auth = await get('/macro/dictionary/units', bearer());
      expect(auth.status).toBe(502);
      expect(auth.json().errors).toMatchObject({ status: 502, code: 'UPSTREAM_AUTH_FAILED' });
    });

    it('upstream 429 → 429 UPSTREAM_RATE_LIMITED with Retry-After copied', async () => {
      fake.behave({ rateLimit: { afterCalls: 0, retryAfterSeconds: 9 } });
      const res = await get('/macro/dictionary/units', bearer());
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toBe('9');
      expect(res.json().error).toMatchObject({
        code: 'UPSTREAM_RATE_LIMITED',
        retryAfterSeconds: 9,
        retryable: true,
      });
      // That 429 put macro into cooldown (test/limits covers it); lift it for the tests that follow.
      await gw.app.get(UpstreamLimitsService).limiter('macro')!.liftCooldown();
    });

    it('keeps the vendor code and a cleaned message', async () => {
      const res = await get('/macro/layout/tables/NOPE', bearer());
      expect(res.status).toBe(404);
      expect(res.json().error.upstreamCode).toBeDefined();
    });

    it('our key rejected upstream → 502 UPSTREAM_AUTH_FAILED, never 401, and no key in the message', async () => {
      fake.behave({
        failWith: {
          status: 401,
          body: { errors: { status: 401, code: 'INVALID', message: `bad key ${UPSTREAM_TOKEN}` } },
        },
      });
      const res = await get('/macro/dictionary/units', bearer());
      expect(res.status).toBe(502);
      expect(res.json().error.code).toBe('UPSTREAM_AUTH_FAILED');
      expect(res.text).not.toContain(UPSTREAM_TOKEN);
    });

    it('an answer over the size cap: 429 RESPONSE_TOO_LARGE, not retryable, no Retry-After, one vendor call, XML when asked', async () => {
      fake.behave({ oversizeBytes: 512 * 1024 });
      const res = await get('/macro/dictionary/units', bearer());
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toBeUndefined();
      const body = res.json();
      expect(body.error).toMatchObject({ code: 'RESPONSE_TOO_LARGE', retryable: false, upstream: 'macro' });
      expect(body.error.message).toMatch(/narrow the request/);
      // The vendor-shaped member the CEIC clients read says the same.
      expect(body.errors).toMatchObject({ status: 429, code: 'RESPONSE_TOO_LARGE' });
      // Never retried inside the gateway: one vendor call.
      expect(fake.calls('/dictionary/units')).toBe(1);
      const xml = await get('/macro/dictionary/units?format=xml', bearer());
      expect(xml.status).toBe(429);
      expect(xml.headers['content-type']).toContain('application/xml');
      expect(xml.text).toContain('<code>RESPONSE_TOO_LARGE</code>');
      expect(xml.text).toContain('<retryable>false</retryable>');
      expect(fake.calls('/dictionary/units')).toBe(2);
    });

    it.each([
      ['reset', { resetConnections: {} }, 503, 'UPSTREAM_UNAVAILABLE'],
      ['timeout', { hang: true }, 504, 'UPSTREAM_TIMEOUT'],
      ['malformed JSON', { malformedJson: true }, 502, 'UPSTREAM_ERROR'],
    ])('%s → %d %s', async (_n, behaviour, status, code) => {
      fake.behave(behaviour);
      const res = await get('/macro/dictionary/units', bearer());
      expect(res.status).toBe(status);
      expect(res.json().error.code).toBe(code);
    });

    it('refused → 503 UPSTREAM_UNAVAILABLE', async () => {
      await fake.stop();
      try {
        const res = await get('/macro/dictionary/units', bearer());
        expect(res.status).toBe(503);
        expect(res.json().error).toMatchObject({
          code: 'UPSTREAM_UNAVAILABLE',
          upstreamCode: 'ECONNREFUSED',
        });
      } finally {
        await fake.restart();
      }
    });
  });

  describe('vendor client compatibility', () => {
    it('POST /macro/login answers 400 (never 401) telling the caller to use a gateway key', async () => {
      const res = await http(gw.url + '/macro/login?login=a&password=b', {
        method: 'POST',
        body: '{}',
        headers: { 'content-type': 'application/json' },
      });
      expect(res.status).toBe(400);
      expect(res.json().error.message).toMatch(/gateway key/);
      expect(res.json().errors.status).toBe(400);
      expect(fake.requests).toHaveLength(0);
    });

    it('a GET with a JSON content type and no body is fine; %2C ids reach the upstream encoded', async () => {
      const res = await get('/macro/series/1%2C2/data?count=5', {
        authorization: reader.key,
        'content-type': 'application/json',
        'user-agent': 'Swagger-Codegen/2.11.4.389/python',
      });
      expect(res.status).toBe(200);
      expect(fake.requests[0].path).toBe('/v2/series/1%2C2/data');
    });

    it('writes pass the body through as sent (form and JSON)', async () => {
      const filters = await get('/macro/filters', { authorization: `Bearer ${writer.key}` });
      const filterId = filters.json().data[0].id as string;
      fake.reset();
      const form = await http(gw.url + '/macro/feeds', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${writer.key}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: `filter_id=${filterId}&name=CPI+weekly&full_dump=False`,
      });
      expect(form.status).toBe(200);
      expect(fake.requests[0].body.toString()).toBe(`filter_id=${filterId}&name=CPI+weekly&full_dump=False`);
      expect(fake.requests[0].headers['content-type']).toBe('application/x-www-form-urlencoded');
      const id = form.json().data.id as string;
      const patch = await http(gw.url + `/macro/feeds/${id}`, {
        method: 'PATCH',
        headers: { 'x-api-key': writer.key, 'content-type': 'application/json' },
        body: JSON.stringify({ name: 'renamed' }),
      });
      expect(patch.status).toBe(200);
      expect(fake.requests[1].body.toString()).toBe('{"name":"renamed"}');
    });

    it('a body over the limit → 413 PAYLOAD_TOO_LARGE in the envelope; nothing reaches the upstream', async () => {
      const res = await http(gw.url + '/macro/feeds', {
        method: 'POST',
        headers: {
          authorization: `Bearer ${writer.key}`,
          'content-type': 'application/x-www-form-urlencoded',
        },
        body: 'name=' + 'x'.repeat(2 * 1024 * 1024),
      });
      expect(res.status).toBe(413);
      expect(res.json().error.code).toBe('PAYLOAD_TOO_LARGE');
      expect(res.json().errors.status).toBe(413);
      expect(fake.requests).toHaveLength(0);
    });

    it('every answer carries x-request-id, including unknown routes', async () => {
      const res = await get('/macro/no/such/route', { ...bearer(), 'x-request-id': 'client-req-42' });
      expect(res.status).toBe(404);
      expect(res.headers['x-request-id']).toBe('client-req-42');
      expect(res.json().error.code).toBe('NOT_FOUND');
    });
  });
});
