import { FakeDealsUpstream } from '../../src/sandbox/deals/fake-deals.upstream.js';
import { FakeDocumentsUpstream } from '../../src/sandbox/documents/fake-documents.upstream.js';
import { documents } from '../../src/sandbox/documents/documents.data.js';
import { testConsumer } from '../helpers/consumers.js';
import {
  type GatewayHandle,
  http,
  type HttpResult,
  rawGet,
  startGateway,
  withGateway,
} from '../helpers/gateway.js';
import { ampleBudget, oneCallPerRequest } from './isolation.js';

const UPSTREAM_TOKEN = 'sbx_emis_portal_key_77d1e0a4';
const USERNAME = 'sbx_user_docs';
const PASSWORD = 'sbx_pw_docs_5b0e1c77f2';
const DEALS_TOKEN = 'sbx_dw_portal_key_c3a9e512';

const reader = testConsumer({ id: 'reader', upstreams: new Set(['documents', 'deals']) });
const outsider = testConsumer({ id: 'outsider', upstreams: new Set(['company']) });
const CONSUMERS = [reader.consumer, outsider.consumer];

function newFake(): FakeDocumentsUpstream {
  return new FakeDocumentsUpstream({ token: UPSTREAM_TOKEN, username: USERNAME, password: PASSWORD });
}

/** Settings for a gateway whose documents interface uses the login step against `fake`. */
function loginEnv(
  fake: FakeDocumentsUpstream,
  extra: Record<string, string> = {},
  deals?: FakeDealsUpstream,
): Record<string, string> {
  return {
    ...oneCallPerRequest('DOCUMENTS', 'DEALS'),
    UPSTREAM_DOCUMENTS_BASE_URL: fake.url,
    UPSTREAM_DOCUMENTS_USERNAME: USERNAME,
    UPSTREAM_DOCUMENTS_PASSWORD: PASSWORD,
    UPSTREAM_DOCUMENTS_TIMEOUT_MS: '3000',
    // Short pauses: several tests below make the gateway re-login on purpose in quick succession.
    UPSTREAM_DOCUMENTS_LOGIN_BACKOFF_MS: '20',
    UPSTREAM_DOCUMENTS_LOGIN_BACKOFF_MAX_MS: '40',
    ...(deals ? { UPSTREAM_DEALS_BASE_URL: deals.url, UPSTREAM_DEALS_TOKEN: DEALS_TOKEN } : {}),
    ...extra,
  };
}

/** One test's own gateway (its own fake and settings), for the tests that boot one each. */
function bootWithLogin(
  fake: FakeDocumentsUpstream,
  extra: Record<string, string> = {},
  deals?: FakeDealsUpstream,
): Promise<GatewayHandle> {
  return startGateway({ env: loginEnv(fake, extra, deals), consumers: CONSUMERS });
}

const bearer = (key = reader.key) => ({ authorization: `Bearer ${key}` });

/** Every EMIS-prefixed error body: `errors` is an array of {code: integer, detail: string}. */
function expectEmisErrors(res: HttpResult, code?: number): void {
  const body = res.json();
  expect(Array.isArray(body.errors)).toBe(true);
  expect(body.errors.length).toBeGreaterThan(0);
  for (const e of body.errors) {
    expect(Number.isInteger(e.code)).toBe(true);
    expect(typeof e.detail).toBe('string');
  }
  if (code !== undefined) expect(body.errors[0].code).toBe(code);
  expect(typeof body.error.code).toBe('string');
}

/** Login calls the fake received (successful or not). */
const loginCalls = (fake: FakeDocumentsUpstream) => fake.calls('/Auth/login/');

describe('documents: the login step', () => {
  it('50 concurrent requests on a cold gateway cause exactly one login, all succeed', async () => {
    const fake = newFake();
    await fake.start();
    const gw = await bootWithLogin(fake);
    try {
      expect(loginCalls(fake)).toBe(0); // lazy: nothing at start-up
      const results = await Promise.all(
        Array.from({ length: 50 }, (_, i) =>
          http(`${gw.url}/documents/Dictionary/getTopics/?n=${i}`, { headers: bearer() }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(50).fill(200));
      expect(loginCalls(fake)).toBe(1);
      expect(fake.logins).toBe(1);
      const sessions = new Set(
        fake.requests
          .filter((r) => r.path.endsWith('/getTopics/'))
          .map((r) => new URL(r.url, fake.url).searchParams.get('sessionId')),
      );
      expect(sessions.size).toBe(1);
    } finally {
      await gw.close();
      await fake.close();
    }
  });

  describe('with one gateway', () => {
    const fake = newFake();
    const gw = withGateway({ servers: [fake], env: () => loginEnv(fake), consumers: CONSUMERS });
    beforeAll(async () => {
      // Warm: the session exists before the tests below.
      expect((await http(`${gw.url}/documents/Dictionary/getTopics/`, { headers: bearer() })).status).toBe(
        200,
      );
    });
    beforeEach(() => {
      fake.errorStatus = 'http200';
    });

    const sessionOf = (i = 0) => fake.requests[i].query.filter(([k]) => k === 'sessionId').map(([, v]) => v);

    it.each([
      ['Authorization: Bearer', (k: string) => ({ headers: { authorization: `Bearer ${k}` }, query: '' })],
      ['X-API-Key', (k: string) => ({ headers: { 'x-api-key': k }, query: '' })],
      ['token query', (k: string) => ({ headers: {}, query: `&token=${k}` })],
      ['sessionId query (the EMIS client)', (k: string) => ({ headers: {}, query: `&sessionId=${k}` })],
    ])('key custody, %s: the upstream gets only our session, never the consumer’s key', async (_n, pos) => {
      const p = pos(reader.key);
      const res = await http(`${gw.url}/documents/Search/query/?countries[0]=PL${p.query}`, {
        headers: p.headers,
      });
      expect(res.status).toBe(200);
      expect(fake.requests).toHaveLength(1);
      const seen = fake.requests[0];
      const sessions = sessionOf();
      expect(sessions).toHaveLength(1);
      // A session id as the portal hands one out: base64 with `/`, `+` and `=`.
      expect(sessions[0]).toMatch(/^[A-Za-z0-9+/]+\/[A-Za-z0-9+/]+\+[A-Za-z0-9+/]+={0,2}$/);
      expect(seen.query.some(([k]) => k === 'token')).toBe(false);
      expect(seen.url).not.toContain(reader.key);
      expect(seen.url).not.toContain(PASSWORD);
      for (const v of Object.values(seen.headers)) expect(String(v)).not.toContain(reader.key);
      expect(seen.headers.authorization).toBeUndefined();
      expect(seen.headers['x-api-key']).toBeUndefined();
      expect(res.text).not.toContain(sessions[0]);
      expect(res.text).not.toContain(PASSWORD);
    });

    it('logs in with the password in a form body, never in a URL', async () => {
      fake.expireSessions();
      expect((await http(`${gw.url}/documents/Dictionary/getTopics/`, { headers: bearer() })).status).toBe(
        200,
      );
      const login = fake.requests.find((r) => r.path === '/news/Auth/login/')!;
      expect(login.method).toBe('POST');
      expect(login.url).not.toContain(PASSWORD);
      expect(login.body.toString()).toContain(`password=${PASSWORD}`);
    });

    it('scrubs an upstream echo of the session id from the answer', async () => {
      fake.behave({ echoCredential: true });
      const res = await http(`${gw.url}/documents/Dictionary/getTopics/`, { headers: bearer() });
      expect(res.status).toBe(200);
      const session = sessionOf()[0];
      expect(res.text).not.toContain(session);
      expect(res.text).toContain('[REDACTED]');
    });

    it('an expired session causes one re-login and the requests succeed', async () => {
      const before = fake.requests.length;
      expect(before).toBe(0);
      expect(fake.expireSessions()).toBeGreaterThan(0);
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          http(`${gw.url}/documents/Search/findCompany/?term=bank&n=${i}`, { headers: bearer() }),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
      for (const r of results) expect(r.json().data.companies).toBeDefined();
      expect(loginCalls(fake)).toBe(1);
      expect(fake.logins).toBe(1);
      // A rejected call is retried once with the new session (calls made after the re-login need no retry).
      const calls = fake.requests.filter((r) => r.path === '/news/Search/findCompany/');
      expect(calls.length).toBeGreaterThanOrEqual(11);
      expect(calls.length).toBeLessThanOrEqual(20);
    });

    it('a file request with an expired session re-logs in once and streams the file', async () => {
      const key = documents().find((d) => d.files.length > 0)!.files[0].key;
      fake.expireSessions();
      const res = await http(`${gw.url}/documents/Search/getFile/?key=${key}`, { headers: bearer() });
      expect(res.status).toBe(200);
      expect(res.headers['content-disposition']).toContain(key);
      expect(loginCalls(fake)).toBe(1);
      expect(fake.calls('/Search/getFile/')).toBe(2);
    });

    describe('EMIS errors with HTTP 200 become envelopes with a real status', () => {
      it.each([
        ['/documents/Search/getFile/', 400, 'UPSTREAM_BAD_REQUEST', 3002],
        ['/documents/Search/getFile/?key=NOPE', 404, 'NOT_FOUND', 3004],
        ['/documents/Search/query/?order=sideways', 400, 'UPSTREAM_BAD_REQUEST', 3005],
        ['/news/Search/getDocuments/', 400, 'UPSTREAM_BAD_REQUEST', 3002],
      ])('%s → %d %s, errors[0].code %d', async (path, status, code, vendorCode) => {
        const res = await http(gw.url + path, { headers: bearer() });
        expect(fake.requests.length).toBeGreaterThan(0);
        expect(fake.requests.every((r) => r.method === 'GET' || r.path.endsWith('/Auth/login/'))).toBe(true);
        expect(res.status).toBe(status);
        expect(res.json().error).toMatchObject({
          code,
          upstream: 'documents',
          upstreamCode: vendorCode,
          upstreamStatus: 200,
        });
        expectEmisErrors(res, vendorCode);
      });

      it('a backend error on HTTP 200 → 502 UPSTREAM_ERROR keeping the vendor code', async () => {
        fake.behave({
          failWith: {
            status: 200,
            body: { errors: [{ code: 1060, detail: 'Backend forwarded exception' }] },
            times: 1,
          },
        });
        const res = await http(`${gw.url}/documents/Dictionary/getTopics/`, { headers: bearer() });
        expect(res.status).toBe(502);
        expect(res.json().error).toMatchObject({ code: 'UPSTREAM_ERROR', upstreamCode: 1060 });
        expect(res.json().errors).toEqual([{ code: 1060, detail: res.json().error.message }]);
      });

      it('the same with statuses (errorStatus http4xx)', async () => {
        fake.errorStatus = 'http4xx';
        const res = await http(`${gw.url}/documents/Search/getFile/?key=NOPE`, { headers: bearer() });
        expect(res.status).toBe(404);
        expectEmisErrors(res, 3004);
        const bad = await http(`${gw.url}/documents/Search/query/?order=sideways`, { headers: bearer() });
        expect(bad.status).toBe(400);
        expectEmisErrors(bad, 3005);
      });

      it('an XML error body on HTTP 200 → an XML envelope with a real status', async () => {
        const res = await http(`${gw.url}/documents/Search/query/?order=sideways&format=xml`, {
          headers: bearer(),
        });
        expect(fake.requests.at(-1)!.path).toBe('/news/xml/Search/query/');
        expect(res.status).toBe(400);
        expect(res.headers['content-type']).toContain('xml');
        expect(res.text).toContain('<code>UPSTREAM_BAD_REQUEST</code>');
        expect(res.text).toMatch(/<errors><code>3005<\/code><detail>/);
      });
    });

    it('XML goes to the vendor’s /xml/ twin without a format parameter', async () => {
      const res = await http(`${gw.url}/documents/Dictionary/getCountries/?format=xml`, {
        headers: bearer(),
      });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toContain('xml');
      expect(res.text).toContain('<code>PL</code>');
      const seen = fake.requests.at(-1)!;
      expect(seen.path).toBe('/news/xml/Dictionary/getCountries/');
      expect(seen.query.some(([k]) => k === 'format')).toBe(false);
      expect(seen.headers.accept).toBe('application/xml');
      const viaAccept = await http(`${gw.url}/documents/Dictionary/getTopics/`, {
        headers: { ...bearer(), accept: 'application/xml' },
      });
      expect(viaAccept.status).toBe(200);
      expect(fake.requests.at(-1)!.path).toBe('/news/xml/Dictionary/getTopics/');
    });

    it('typed bodies (_type, version) pass through byte for byte, links carrying the credential signed', async () => {
      const res = await http(`${gw.url}/documents/Search/query/?countries[0]=PL&limit=2`, {
        headers: bearer(),
      });
      const direct = await http(`${fake.url}/Search/query/?countries[0]=PL&limit=2&token=${UPSTREAM_TOKEN}`);
      // The portal's links carry the credential (PHP-escaped: `http:\/\/…&token=…`); the gateway's are signed.
      expect(direct.text).toMatch(/"link":"http:\\\/\\\/[^"]*&token=/);
      expect(res.text).not.toContain(UPSTREAM_TOKEN);
      expect(res.text).toMatch(/"link":"\/links\/documents\/download\?t=[^"]+"/);
      const links = /"link":"[^"]*"/g;
      expect(res.text.replace(links, '"link":…')).toBe(direct.text.replace(links, '"link":…'));
      const body = res.json();
      expect(body.version).toBe('1.3.2');
      expect(body.data._type).toBe('Emis\\Entity\\Api\\Document\\Result');
      expect(body.data.documents[0]._type).toBe('Emis\\Entity\\Api\\Document\\Document');
    });

    it('streams Search/getFile/ with its content type and disposition', async () => {
      const doc = documents().find((d) => d.files.some((f) => f.format === 'PDF'))!;
      const key = doc.files.find((f) => f.format === 'PDF')!.key;
      fake.behave({ fileBytes: 200_000 });
      const res = await http(`${gw.url}/documents/Search/getFile/?key=${key}`, { headers: bearer() });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toBe('application/pdf');
      expect(res.headers['content-disposition']).toBe(`attachment; filename="${key}.pdf"`);
      expect(res.headers['content-length']).toBe('200000');
      expect(res.text.startsWith('%PDF-')).toBe(true);
      expect(res.text.length).toBe(200_000);
    });

    describe('EMIS client compatibility', () => {
      const deals = new FakeDealsUpstream({ token: DEALS_TOKEN, username: USERNAME, password: PASSWORD });
      // The cache, coalescing and retries stay on here: the usage reports must bypass them.
      const gw2 = withGateway({
        upstreams: { deals: { fake: deals, token: DEALS_TOKEN } },
        // The documents fake is the enclosing block's, already running.
        env: () => ({
          UPSTREAM_DOCUMENTS_BASE_URL: fake.url,
          UPSTREAM_DOCUMENTS_USERNAME: USERNAME,
          UPSTREAM_DOCUMENTS_PASSWORD: PASSWORD,
          ...ampleBudget('DOCUMENTS', 'DEALS'),
        }),
        consumers: CONSUMERS,
      });
      beforeAll(async () => {
        expect((await http(`${gw2.url}/news/Dictionary/getTopics/`, { headers: bearer() })).status).toBe(200);
      });

      const PREFIXES = ['documents', 'news', 'deals', 'dw'];
      const nothingForwarded = () => {
        expect(fake.requests.filter((r) => r.path.includes('/Auth/'))).toEqual([]);
        expect(deals.requests).toEqual([]);
      };

      it.each(PREFIXES)('/%s/Auth/login/ is answered by the gateway with the key as sessionId', async (p) => {
        const res = await http(
          `${gw2.url}/${p}/Auth/login/?username=reader&password=${encodeURIComponent(reader.key)}&package=news`,
        );
        expect(res.status).toBe(200);
        expect(res.json()).toEqual({ data: { sessionId: reader.key } });
        expect(res.headers['cache-control']).toBe('no-store');
        const form = await http(`${gw2.url}/${p}/Auth/login/`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: `username=reader&password=${encodeURIComponent(reader.key)}`,
        });
        expect(form.status).toBe(200);
        expect(form.json().data.sessionId).toBe(reader.key);
        nothingForwarded();
      });

      it.each(PREFIXES)(
        '/%s/Auth/logout/ is a local no-op success; the upstream session lives on',
        async (p) => {
          const out = await http(`${gw2.url}/${p}/Auth/logout/?sessionId=${reader.key}`);
          expect(out.status).toBe(200);
          expect(out.json()).toEqual({ data: { loggedOut: true } });
          nothingForwarded();
          const logins = loginCalls(fake);
          expect(
            (await http(`${gw2.url}/documents/Dictionary/getTopics/`, { headers: bearer() })).status,
          ).toBe(200);
          expect(loginCalls(fake)).toBe(logins);
        },
      );

      it.each(PREFIXES)('/%s/Auth/getUserData/ is answered locally for the session key', async (p) => {
        const res = await http(`${gw2.url}/${p}/Auth/getUserData/?sessionId=${reader.key}`);
        expect(res.status).toBe(200);
        expect(res.json().data).toMatchObject({ username: 'reader', gateway: 'atrium' });
        const anonymous = await http(`${gw2.url}/${p}/Auth/getUserData/`);
        expect(anonymous.status).toBe(401);
        expectEmisErrors(anonymous, 401);
        nothingForwarded();
      });

      it.each(PREFIXES)(
        '/%s: a wrong username or password → 401 with an integer-coded errors array, no echo',
        async (p) => {
          const wrongUser = await http(
            `${gw2.url}/${p}/Auth/login/?username=someone-else&password=${reader.key}`,
          );
          expect(wrongUser.status).toBe(401);
          expectEmisErrors(wrongUser, 401);
          expect(wrongUser.json().error.code).toBe('UNAUTHENTICATED');
          expect(wrongUser.text).not.toContain(reader.key);
          expect(wrongUser.json().data).toBeUndefined();
          const wrongPassword = await http(
            `${gw2.url}/${p}/Auth/login/?username=reader&password=atr_wrong_key_1234567`,
          );
          expect(wrongPassword.status).toBe(401);
          expectEmisErrors(wrongPassword, 401);
          expect(wrongPassword.text).not.toContain('atr_wrong_key_1234567');
          const missing = await http(`${gw2.url}/${p}/Auth/login/?username=reader`);
          expect(missing.status).toBe(400);
          expectEmisErrors(missing, 400);
          nothingForwarded();
        },
      );

      it('a consumer not allowed the interface cannot log in to it (403, integer code)', async () => {
        const res = await http(`${gw2.url}/news/Auth/login/?username=outsider&password=${outsider.key}`);
        expect(res.status).toBe(403);
        expectEmisErrors(res, 403);
        nothingForwarded();
      });

      it('gateway-made errors under every prefix carry integer-coded errors arrays', async () => {
        const cases: Array<[string, Record<string, string>, number]> = [
          ['/news/Search/query/', {}, 401],
          ['/dw/SearchDeal/getDeals/', {}, 401],
          ['/documents/Search/query/', bearer(outsider.key), 403],
          ['/deals/SearchDeal/getDeals/', bearer(outsider.key), 403],
          ['/documents/Search/nothing/', bearer(), 404],
          ['/news/search/query/', bearer(), 404],
          ['/dw/Search/query/', bearer(), 404],
        ];
        for (const [path, headers, status] of cases) {
          const res = await http(gw2.url + path, { headers });
          expect([path, res.status]).toEqual([path, status]);
          expectEmisErrors(res, status);
        }
        const dots = await rawGet(gw2.url, '/news/Search/%2e%2e/query/', bearer());
        expect(dots.status).toBe(400);
        expectEmisErrors(dots, 400);
        expect(fake.requests).toEqual([]);
      });

      it('the client’s whole flow: login, calls with sessionId, arrays, + as space, %2B kept, logout', async () => {
        const login = await http(
          `${gw2.url}/news/Auth/login/?username=reader&password=${encodeURIComponent(reader.key)}`,
        );
        const sessionId = login.json().data.sessionId as string;
        const q =
          'countries[0]=PL&countries[1]=HU&formats[]=2&languages=en&term=retail+sales&skipDuplicates=1&includeBody=0' +
          `&startDate=2023-01-01T00:00:00%2B0000&sessionId=${encodeURIComponent(sessionId)}`;
        const res = await http(`${gw2.url}/news/Search/query/?${q}`, { headers: { accept: '*/*' } });
        expect(res.status).toBe(200);
        expect(res.json().data.search.countries).toEqual(['PL', 'HU']);
        const seen = fake.requests.at(-1)!;
        expect(seen.path).toBe('/news/Search/query/');
        // Array forms reach the vendor as sent, in the canonical order (parameters sorted by name).
        expect(seen.url).toContain(
          'countries[0]=PL&countries[1]=HU&formats[]=2&includeBody=0&languages=en&skipDuplicates=1',
        );
        expect(seen.url).toContain('startDate=2023-01-01T00%3A00%3A00%2B0000');
        expect(seen.query).toContainEqual(['term', 'retail sales']);
        expect(seen.query).toContainEqual(['startDate', '2023-01-01T00:00:00+0000']);
        const sessions = seen.query.filter(([k]) => k === 'sessionId');
        expect(sessions).toHaveLength(1);
        expect(sessions[0][1]).not.toBe(reader.key);
        expect(seen.url).not.toContain(reader.key);
        const deal = await http(
          `${gw2.url}/dw/SearchDeal/getDeals/?countries=PL&sessionId=${encodeURIComponent(sessionId)}`,
        );
        expect(deal.status).toBe(200);
        expect(deals.requests[0].query).toEqual([
          ['countries', 'PL'],
          ['token', DEALS_TOKEN],
        ]);
        const out = await http(`${gw2.url}/news/Auth/logout/?sessionId=${encodeURIComponent(sessionId)}`);
        expect(out.json()).toEqual({ data: { loggedOut: true } });
        expect(fake.requests.filter((r) => r.path.includes('/Auth/'))).toEqual([]);
      });

      it('never redirects: no trailing slash and a double slash are served in place', async () => {
        const noSlash = await http(`${gw2.url}/documents/Search/query?countries=PL`, { headers: bearer() });
        expect(noSlash.status).toBe(200);
        const doubled = await rawGet(gw2.url, `/news//Search/query/?countries=HU&token=${reader.key}`);
        expect(doubled.status).toBe(200);
        expect(fake.requests.map((r) => r.path)).toEqual(['/news/Search/query/', '/news/Search/query/']);
        const login = await http(
          `${gw2.url}/news/Auth/login?username=reader&password=${encodeURIComponent(reader.key)}`,
        );
        expect(login.status).toBe(200);
      });

      it('accepts a 20 KB query string (Usage/reportMultiple/) and forwards it whole', async () => {
        const list = Array.from({ length: 120 }, (_, i) => ({
          documentId: 88000 + i,
          accessTime: '2024-05-20T09:00:00+0000',
          customerIp: '10.0.0.1',
          username: 'someone@example.org',
        }));
        const query = `data=${encodeURIComponent(JSON.stringify(list))}`;
        expect(query.length).toBeGreaterThan(20_000);
        const res = await http(`${gw2.url}/news/Usage/reportMultiple/?${query}&sessionId=${reader.key}`);
        expect(res.status).toBe(200);
        expect(res.json().data).toEqual({ reported: 120 });
        expect(fake.usage).toHaveLength(120);
        expect(fake.usage[119]).toMatchObject({ documentId: 88119, via: 'reportMultiple' });
      });

      it('Usage/report/ sent twice reaches the upstream twice (the cache and coalescing are on)', async () => {
        const report = () =>
          http(`${gw2.url}/news/Usage/report/?documentId=88001&accessTime=2024-05-20T09:00:00%2B0000`, {
            headers: bearer(),
          });
        // Concurrently (coalescing would merge them) and once more afterwards (the cache would answer).
        const results = [...(await Promise.all([report(), report()])), await report()];
        for (const res of results) {
          expect(res.status).toBe(200);
          expect(res.json().data).toEqual({ reported: 1 });
          expect(res.headers['x-cache']).not.toBe('HIT');
        }
        expect(fake.calls('/Usage/report/')).toBe(3);
        expect(fake.usage.map((u) => [u.documentId, u.accessTime])).toEqual(
          Array(3).fill([88001, '2024-05-20T09:00:00+0000']),
        );
        // Contrast: an ordinary GET sent twice reaches the upstream once on this gateway.
        for (let i = 0; i < 2; i++)
          expect((await http(`${gw2.url}/news/Dictionary/getFormats/`, { headers: bearer() })).status).toBe(
            200,
          );
        expect(fake.calls('/Dictionary/getFormats/')).toBe(1);
      });
    });
  });

  it('a wrong password gives 502 UPSTREAM_AUTH_FAILED and no login storm (failures back off)', async () => {
    const fake = newFake();
    await fake.start();
    const gw = await bootWithLogin(fake, {
      UPSTREAM_DOCUMENTS_PASSWORD: 'sbx_wrong_password_e0d2',
      UPSTREAM_DOCUMENTS_LOGIN_BACKOFF_MS: '5000',
      UPSTREAM_DOCUMENTS_LOGIN_BACKOFF_MAX_MS: '60000',
    });
    const get = () => http(`${gw.url}/documents/Dictionary/getTopics/`, { headers: bearer() });
    try {
      const burst = await Promise.all(Array.from({ length: 50 }, get));
      for (const res of burst) {
        expect(res.status).toBe(502);
        expect(res.json().error).toMatchObject({ code: 'UPSTREAM_AUTH_FAILED', upstream: 'documents' });
        expectEmisErrors(res, 2001);
        expect(res.text).not.toContain('sbx_wrong_password_e0d2');
      }
      expect(loginCalls(fake)).toBe(1);
      // During the pause (5 s here) requests fail fast without calling the vendor; the doubling of the
      // pauses is covered with a settable clock in emis-session-credentials.e2e.spec.ts.
      for (let i = 0; i < 10; i++) expect((await get()).status).toBe(502);
      await Promise.all(Array.from({ length: 20 }, get));
      expect(loginCalls(fake)).toBe(1);
      expect(fake.calls()).toBe(1);
      const ready = await http(`${gw.url}/health/ready`);
      const facts = ready.json().upstreams.find((u: { name: string }) => u.name === 'documents');
      expect(facts.session).toMatchObject({ state: 'backoff', loginFailures: 1, logins: 0 });
    } finally {
      await gw.close();
      await fake.close();
    }
  });

  it('a fresh session the upstream rejects again is not renewed again at once (no re-login storm)', async () => {
    // Every session is over a day old by the time it is used: each call says "Session expired".
    let t = Date.UTC(2025, 0, 1);
    const fake = new FakeDocumentsUpstream({
      token: UPSTREAM_TOKEN,
      username: USERNAME,
      password: PASSWORD,
      now: () => (t += 86_400_001),
    });
    await fake.start();
    const gw = await bootWithLogin(fake, {
      UPSTREAM_DOCUMENTS_LOGIN_BACKOFF_MS: '5000',
      UPSTREAM_DOCUMENTS_LOGIN_BACKOFF_MAX_MS: '60000',
    });
    const get = () => http(`${gw.url}/documents/Dictionary/getTopics/`, { headers: bearer() });
    try {
      const burst = await Promise.all(Array.from({ length: 50 }, get));
      for (const res of burst) {
        expect(res.status).toBe(502);
        expect(res.json().error.code).toBe('UPSTREAM_AUTH_FAILED');
        expectEmisErrors(res, 2002);
      }
      // The first login, then one re-login for the rejected session; each call retried at most once.
      expect(fake.logins).toBe(2);
      expect(fake.calls('/Dictionary/getTopics/')).toBeLessThanOrEqual(100);
      for (let i = 0; i < 10; i++) expect((await get()).status).toBe(502);
      expect(fake.logins).toBe(2);
      expect(fake.calls('/Dictionary/getTopics/')).toBeLessThanOrEqual(110);
    } finally {
      await gw.close();
      await fake.close();
    }
  });

  it('logs out of the upstream on shutdown', async () => {
    const fake = newFake();
    await fake.start();
    const gw = await bootWithLogin(fake);
    try {
      expect((await http(`${gw.url}/documents/Dictionary/getTopics/`, { headers: bearer() })).status).toBe(
        200,
      );
      expect(fake.activeSessions).toBe(1);
    } finally {
      await gw.close();
    }
    const logout = fake.requests.find((r) => r.path === '/news/Auth/logout/');
    expect(logout).toBeDefined();
    expect(logout!.method).toBe('POST');
    expect(fake.activeSessions).toBe(0);
    await fake.close();
  });

  it('with a static token instead: the upstream gets token, no login happens', async () => {
    const fake = newFake();
    await fake.start();
    const gw = await startGateway({
      env: {
        UPSTREAM_DOCUMENTS_BASE_URL: fake.url,
        UPSTREAM_DOCUMENTS_TOKEN: UPSTREAM_TOKEN,
        ...oneCallPerRequest('DOCUMENTS'),
      },
      consumers: CONSUMERS,
    });
    try {
      const res = await http(`${gw.url}/news/Dictionary/getTopics/?sessionId=${reader.key}`);
      expect(res.status).toBe(200);
      expect(fake.requests).toHaveLength(1);
      expect(fake.requests[0].query).toEqual([['token', UPSTREAM_TOKEN]]);
      expect(loginCalls(fake)).toBe(0);
      fake.behave({ echoCredential: true });
      const echoed = await http(`${gw.url}/news/Dictionary/getTopics/`, { headers: bearer() });
      expect(echoed.text).not.toContain(UPSTREAM_TOKEN);
      fake.reset();
      // A rejected portal key is an operator problem: 502, one call, no retry loop.
      fake.behave({ failWith: { status: 200, body: { errors: [{ code: 2003, detail: 'Invalid token' }] } } });
      const rejected = await http(`${gw.url}/documents/Dictionary/getTopics/`, { headers: bearer() });
      expect(rejected.status).toBe(502);
      expect(rejected.json().error.code).toBe('UPSTREAM_AUTH_FAILED');
      expectEmisErrors(rejected, 2003);
      expect(fake.calls()).toBe(1);
    } finally {
      await gw.close();
      await fake.close();
    }
  });
});
