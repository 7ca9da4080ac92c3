import { XMLParser } from 'fast-xml-parser';
import { EMIS_CODES, EMIS_VERSION } from '../../src/sandbox/emis/fake-emis.upstream.js';
import { FakeDocumentsUpstream } from '../../src/sandbox/documents/fake-documents.upstream.js';
import { documents } from '../../src/sandbox/documents/documents.data.js';
import { call, manualClock } from './http.js';

const TOKEN = 'sbx_emis_test';
const USER = 'sbx_user';
const PASS = 'sbx_pw_secret';

describe('FakeDocumentsUpstream', () => {
  const clock = manualClock();
  const fake = new FakeDocumentsUpstream({
    token: TOKEN,
    username: USER,
    password: PASS,
    sessionTtlMs: 60_000,
    now: clock.now,
  });
  const get = (fnAndQuery: string) => {
    const sep = fnAndQuery.includes('?') ? '&' : '?';
    return call(`${fake.url}${fnAndQuery}${sep}token=${TOKEN}`);
  };
  const login = async (): Promise<string> => {
    const res = await call(`${fake.url}/Auth/login/?username=${USER}&password=${PASS}`);
    return res.json.data.sessionId as string;
  };

  beforeAll(async () => {
    await fake.start();
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => {
    fake.reset();
    fake.errorStatus = 'http200';
  });

  it('serves under /news', () => {
    expect(fake.url).toMatch(/\/news$/);
  });

  describe('auth', () => {
    it('accepts the portal key as token', async () => {
      const res = await get('/Dictionary/getCountries/');
      expect(res.status).toBe(200);
      expect(res.json.version).toBe(EMIS_VERSION);
      expect(res.json.data[0]).toEqual({
        _type: 'Emis\\Entity\\Api\\Dictionary\\Country',
        id: 10,
        code: 'PL',
        name: 'Poland',
      });
    });

    it('answers missing and wrong keys with ApiError bodies on HTTP 200', async () => {
      const missing = await call(`${fake.url}/Dictionary/getCountries/`);
      expect(missing.status).toBe(200);
      expect(missing.json).toEqual({
        errors: [
          { code: EMIS_CODES.AUTH_REQUIRED, detail: 'Authentication required: pass token or sessionId' },
        ],
      });
      const wrong = await call(`${fake.url}/Dictionary/getCountries/?token=nope`);
      expect(wrong.json).toEqual({ errors: [{ code: 2003, detail: 'Invalid token' }] });
    });

    it('sends the matching HTTP status with errorStatus http4xx', async () => {
      fake.errorStatus = 'http4xx';
      const wrong = await call(`${fake.url}/Dictionary/getCountries/?token=nope`);
      expect(wrong.status).toBe(401);
      expect(wrong.json.errors[0].code).toBe(2003);
      const missingParam = await get('/Search/getFile/');
      expect(missingParam.status).toBe(400);
    });

    it('logs in with username/password, counts logins, and rejects bad credentials', async () => {
      const bad = await call(`${fake.url}/Auth/login/?username=${USER}&password=wrong`);
      expect(bad.status).toBe(200);
      expect(bad.json).toEqual({ errors: [{ code: 2001, detail: 'Invalid username or password' }] });
      expect(fake.logins).toBe(0);
      const session = await login();
      expect(session).toMatch(/^[A-Za-z0-9+/]+\/[A-Za-z0-9+/]+\+[A-Za-z0-9+/]+={0,2}$/);
      expect(fake.logins).toBe(1);
      const res = await call(
        `${fake.url}/Search/query/?countries[0]=PL&sessionId=${encodeURIComponent(session)}`,
      );
      expect(res.json.data._type).toBe('Emis\\Entity\\Api\\Document\\Result');
      const user = await call(`${fake.url}/Auth/getUserData/?sessionId=${encodeURIComponent(session)}`);
      expect(user.json.data).toMatchObject({ username: USER });
      expect(user.json.data._type).toBeUndefined();
    });

    it('accepts login parameters in a POST form body', async () => {
      const res = await call(`${fake.url}/Auth/login/`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: `username=${USER}&password=${PASS}`,
      });
      expect(typeof res.json.data.sessionId).toBe('string');
    });

    it('expires sessions after sessionTtlMs on its clock', async () => {
      const session = await login();
      clock.advance(59_000);
      expect(
        (await call(`${fake.url}/Dictionary/getTopics/?sessionId=${encodeURIComponent(session)}`)).json.data,
      ).toBeDefined();
      clock.advance(2_000);
      const expired = await call(
        `${fake.url}/Dictionary/getTopics/?sessionId=${encodeURIComponent(session)}`,
      );
      expect(expired.status).toBe(200);
      expect(expired.json).toEqual({ errors: [{ code: 2002, detail: 'Session expired' }] });
      const unknown = await call(`${fake.url}/Dictionary/getTopics/?sessionId=deadbeef`);
      expect(unknown.json.errors[0].detail).toBe('Session expired');
    });

    it('expireSessions(), POST /__fake/expire-sessions and Auth/logout/ end sessions', async () => {
      fake.expireSessions(); // sessions of earlier tests survive reset() on purpose
      const a = await login();
      expect(fake.expireSessions()).toBe(1);
      expect(
        (await call(`${fake.url}/Dictionary/getTopics/?sessionId=${encodeURIComponent(a)}`)).json.errors[0]
          .code,
      ).toBe(2002);
      const b = await login();
      const ctl = await call(`${fake.controlUrl}/expire-sessions`, { method: 'POST' });
      expect(ctl.json).toEqual({ expired: 1 });
      expect(
        (await call(`${fake.url}/Dictionary/getTopics/?sessionId=${encodeURIComponent(b)}`)).json.errors[0]
          .code,
      ).toBe(2002);
      const c = await login();
      expect((await call(`${fake.controlUrl}/sessions`)).json).toEqual({ active: 1, logins: 3 });
      const out = await call(`${fake.url}/Auth/logout/?sessionId=${encodeURIComponent(c)}`);
      expect(out.json.data).toEqual({ loggedOut: true });
      expect(
        (await call(`${fake.url}/Dictionary/getTopics/?sessionId=${encodeURIComponent(c)}`)).json.errors[0]
          .code,
      ).toBe(2002);
    });

    it('keeps sessions across reset() but zeroes the login count', async () => {
      const session = await login();
      fake.reset();
      expect(fake.logins).toBe(0);
      expect(
        (await call(`${fake.url}/Dictionary/getTopics/?sessionId=${encodeURIComponent(session)}`)).json.data,
      ).toBeDefined();
    });

    it('echoes the session id with echoCredential', async () => {
      const session = await login();
      fake.behave({ echoCredential: true });
      const res = await call(`${fake.url}/Dictionary/getTopics/?sessionId=${encodeURIComponent(session)}`);
      expect(res.json.echoedCredential).toBe(session);
    });
  });

  describe('paths', () => {
    it('requires exact casing and the trailing slash', async () => {
      for (const path of ['/search/query/', '/Search/query', '/Search/Query/']) {
        const res = await get(`${path}?countries=PL`);
        expect(res.status).toBe(200);
        expect(res.json.errors[0].code).toBe(EMIS_CODES.API_METHOD_NOT_SPECIFIED);
      }
    });

    it('serves the XML variant under /xml/', async () => {
      const res = await get('/xml/Dictionary/getCountries/');
      expect(res.headers['content-type']).toContain('application/xml');
      const doc = new XMLParser().parse(res.text);
      expect(doc.response.version).toBe(EMIS_VERSION);
      expect(doc.response.data[0].code).toBe('PL');
      const err = await call(`${fake.url}/xml/Dictionary/getCountries/?token=nope`);
      expect(new XMLParser().parse(err.text).response.errors.code).toBe(2003);
    });
  });

  describe('Search/query/', () => {
    const all = documents();

    it('honours countries[0]=HU, countries=PL and formats[]=1', async () => {
      const hu = await get('/Search/query/?countries[0]=HU&limit=100');
      const expectedHu = all.filter((d) => d.countries.some((c) => c.code === 'HU'));
      expect(hu.json.data.total).toBe(expectedHu.length);
      expect(
        hu.json.data.documents.every(
          (d: { countries: Array<{ code: string }> }) => d.countries[0].code === 'HU',
        ),
      ).toBe(true);
      const pl = await get('/Search/query/?countries=PL');
      expect(pl.json.data.total).toBe(all.filter((d) => d.countries.some((c) => c.code === 'PL')).length);
      const both = await get('/Search/query/?countries[0]=HU&countries[1]=PL');
      expect(both.json.data.total).toBe(hu.json.data.total + pl.json.data.total);
      const html = await get('/Search/query/?countries[0]=PL&formats[]=1');
      expect(html.json.data.total).toBe(
        all.filter((d) => d.countries[0].code === 'PL' && d.format === 1).length,
      );
    });

    it('pages, orders and filters by term', async () => {
      const newest = await get('/Search/query/?limit=5');
      expect(newest.json.data.results).toBe(5);
      expect(newest.json.data.total).toBe(300);
      const dates = newest.json.data.documents.map((d: { date: string }) => d.date);
      expect([...dates].sort().reverse()).toEqual(dates);
      const next = await get('/Search/query/?limit=5&offset=5');
      expect(next.json.data.documents[0].id).not.toBe(newest.json.data.documents[4].id);
      const ids = await get('/Search/query/?order=id_asc&limit=3');
      expect(ids.json.data.documents.map((d: { id: number }) => d.id)).toEqual([88000, 88001, 88002]);
      const term = await get('/Search/query/?term=retail+sales');
      expect(term.json.data.total).toBe(
        all.filter((d) => `${d.title} ${d.body}`.toLowerCase().includes('retail sales')).length,
      );
      expect(term.json.data.total).toBeGreaterThan(0);
      const bad = await get('/Search/query/?order=sideways');
      expect(bad.json.errors[0].code).toBe(EMIS_CODES.INVALID_PARAMETER);
    });

    it('carries _type tags and version, without body unless includeBody', async () => {
      const res = await get('/Search/query/?limit=1');
      expect(res.json.version).toBe(EMIS_VERSION);
      expect(res.json.data.documents[0]._type).toBe('Emis\\Entity\\Api\\Document\\Document');
      expect(res.json.data.documents[0].body).toBeUndefined();
      const withBody = await get('/Search/query/?limit=1&includeBody=1');
      expect(typeof withBody.json.data.documents[0].body).toBe('string');
    });
  });

  it('streams Search/getFile/ with fileBytes', async () => {
    const doc = documents().find((d) => d.files.length > 0 && d.files[0].format === 'PDF')!;
    fake.behave({ fileBytes: 300_000 });
    const res = await get(`/Search/getFile/?key=${doc.files[0].key}`);
    expect(res.headers['content-type']).toBe('application/pdf');
    expect(res.buf.length).toBe(300_000);
    expect(res.buf.subarray(0, 5).toString()).toBe('%PDF-');
    const missing = await get('/Search/getFile/?key=nope');
    expect(missing.json.errors[0]).toEqual({ code: EMIS_CODES.NOT_FOUND, detail: 'File not found: nope' });
  });

  it('records Usage/report/ and a long Usage/reportMultiple/ (about 40 KiB of query)', async () => {
    await get('/Usage/report/?documentId=88001&accessTime=2024-05-20T09:00:00%2B0000');
    const list = Array.from({ length: 180 }, (_, i) => ({
      documentId: 88000 + i,
      accessTime: '2024-05-20T09:00:00+0000',
      customerIp: '10.0.0.1',
      username: 'someone@example.org',
    }));
    const query = `data=${encodeURIComponent(JSON.stringify(list))}`;
    expect(query.length).toBeGreaterThan(30_000);
    const res = await get(`/Usage/reportMultiple/?${query}`);
    expect(res.json.data).toEqual({ reported: 180 });
    expect(fake.usage).toHaveLength(181);
    expect(fake.usage[0]).toEqual({
      documentId: 88001,
      accessTime: '2024-05-20T09:00:00+0000',
      credential: TOKEN,
      via: 'report',
    });
    expect(fake.usage[180].documentId).toBe(88179);
    const bad = await get('/Usage/reportMultiple/?data=not-json');
    expect(bad.json.errors[0].code).toBe(EMIS_CODES.INVALID_PARAMETER);
  });

  it('uses ApiError bodies for rate limits', async () => {
    fake.behave({ rateLimit: { afterCalls: 0, retryAfterSeconds: 4 } });
    const res = await get('/Dictionary/getTopics/');
    expect(res.status).toBe(429);
    expect(res.headers['retry-after']).toBe('4');
    expect(res.json).toEqual({ errors: [{ code: EMIS_CODES.TOO_MANY_REQUESTS, detail: 'HTTP 429' }] });
  });

  describe('every documents operation of spec §4.4', () => {
    const ops = [
      '/Dictionary/getCountries/',
      '/Dictionary/getLanguages/',
      '/Dictionary/getFormats/',
      '/Dictionary/getIndustries/',
      '/Dictionary/getPublicationTypes/',
      '/Dictionary/getSourceTypes/',
      '/Dictionary/getTopics/',
      '/Dictionary/getPublications/',
      '/Search/query/?countries[0]=PL',
      '/Search/getDocuments/?ids[0]=88000&ids[1]=88001',
      '/Search/getMissingIds/?ids[0]=88000&ids[1]=1',
      `/Search/getFile/?key=${documents().find((d) => d.files.length > 0)!.files[0].key}`,
      '/Search/findCompany/?term=bank',
      '/Usage/report/?documentId=88000',
      '/Usage/reportMultiple/?data=%5B%7B%22documentId%22%3A88000%7D%5D',
    ];

    it.each(ops)('GET %s answers data without errors (JSON and XML)', async (path) => {
      const res = await get(path);
      expect(res.status).toBe(200);
      if (path.startsWith('/Search/getFile/')) return;
      expect(res.json.errors).toBeUndefined();
      expect(res.json.data).toBeDefined();
      const xml = await get(`/xml${path}`);
      expect(xml.text.startsWith('<?xml')).toBe(true);
    });

    it('answers getDocuments and getMissingIds with the right ids', async () => {
      const docs = await get('/Search/getDocuments/?ids[0]=88000&ids[1]=88001&ids[2]=5');
      expect(docs.json.data.documents.map((d: { id: number }) => d.id)).toEqual([88000, 88001]);
      const missing = await get('/Search/getMissingIds/?ids[0]=88000&ids[1]=5');
      expect(missing.json.data.ids).toEqual([5]);
    });
  });
});
