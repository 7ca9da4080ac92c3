import { XMLParser } from 'fast-xml-parser';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { macroFeeds } from '../../src/sandbox/macro/feeds.data.js';
import { call, form, jsonBody } from './http.js';

const TOKEN = 'sbx_macro_test_token';

describe('FakeMacroUpstream', () => {
  const fake = new FakeMacroUpstream({ token: TOKEN, username: 'ann', password: 'pw' });
  const get = (pathAndQuery: string, headers: Record<string, string> = {}) => {
    const sep = pathAndQuery.includes('?') ? '&' : '?';
    return call(`${fake.url}${pathAndQuery}${sep}token=${TOKEN}`, { headers });
  };
  const send = (method: string, path: string, body: { body: string; headers: Record<string, string> }) =>
    call(`${fake.url}${path}?token=${TOKEN}`, { method, ...body });

  beforeAll(async () => {
    await fake.start();
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => fake.reset());

  it('serves under /v2', () => {
    expect(fake.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/v2$/);
  });

  describe('auth', () => {
    it('rejects a missing key with MISSED_API_TOKEN', async () => {
      const res = await call(`${fake.url}/feeds`);
      expect(res.status).toBe(401);
      expect(res.json).toEqual({
        errors: { status: 401, code: 'MISSED_API_TOKEN', message: 'Please use access token to get data' },
      });
      const empty = await call(`${fake.url}/feeds?token=`);
      expect(empty.json.errors.code).toBe('MISSED_API_TOKEN');
    });

    it('rejects a wrong key with another code', async () => {
      const res = await call(`${fake.url}/feeds?token=wrong`);
      expect(res.status).toBe(401);
      expect(res.json.errors).toEqual({
        status: 401,
        code: 'INVALID_API_TOKEN',
        message: 'Invalid access token',
      });
      const header = await call(`${fake.url}/feeds`, { headers: { authorization: 'Bearer ' + TOKEN } });
      expect(header.json.errors.code).toBe('INVALID_API_TOKEN');
    });

    it('accepts the key as token query or raw Authorization header', async () => {
      expect((await call(`${fake.url}/feeds?token=${TOKEN}`)).status).toBe(200);
      expect((await call(`${fake.url}/feeds`, { headers: { authorization: TOKEN } })).status).toBe(200);
    });

    it('POST /login yields a session usable as a key; bad credentials are ERR_INVALID_USER_PASSWORD', async () => {
      const bad = await call(`${fake.url}/login?login=ann&password=nope`, { method: 'POST', body: '{}' });
      expect(bad.status).toBe(401);
      expect(bad.json.errors.code).toBe('ERR_INVALID_USER_PASSWORD');
      const ok = await call(`${fake.url}/login?login=ann&password=pw`, { method: 'POST', body: '{}' });
      const session = ok.json.data.session as string;
      expect(session).toMatch(/^[0-9a-f]{32}$/);
      expect((await call(`${fake.url}/dictionary/units?token=${session}`)).status).toBe(200);
      const out = await call(`${fake.url}/logout/${session}`, { method: 'DELETE' });
      expect(out.json.data).toEqual({ session, destroyed: true });
      expect((await call(`${fake.url}/dictionary/units?token=${session}`)).status).toBe(401);
    });

    it('echoes the credential in success bodies when echoCredential is set', async () => {
      fake.behave({ echoCredential: true });
      const res = await get('/dictionary/units');
      expect(res.json.echoedCredential).toBe(TOKEN);
      expect(res.text).toContain(TOKEN);
      const err = await get('/layout/tables/TB0');
      expect(err.text).not.toContain(TOKEN);
    });
  });

  describe('GET /feeds', () => {
    const all = macroFeeds();
    const day = (s: string) => Date.parse(`${s.slice(0, 10)}T00:00:00Z`);

    it('generates about 250 feeds, ACTIVE and DELETED, with varied dates', () => {
      expect(all).toHaveLength(250);
      expect(new Set(all.map((f) => f.status))).toEqual(new Set(['ACTIVE', 'DELETED']));
      expect(new Set(all.map((f) => f.created_at.slice(0, 4))).size).toBeGreaterThanOrEqual(5);
    });

    it('defaults to 100 records in ascending creation order, as {"data":[…]} without total', async () => {
      const res = await get('/feeds');
      expect(res.status).toBe(200);
      expect(Object.keys(res.json)).toEqual(['data']);
      expect(res.json.data).toHaveLength(100);
      const dates = res.json.data.map((f: { created_at: string }) => day(f.created_at));
      expect([...dates].sort((a, b) => a - b)).toEqual(dates);
    });

    it('pages with offset and limit', async () => {
      const first = await get('/feeds?offset=0&limit=10');
      const second = await get('/feeds?offset=10&limit=10');
      const both = await get('/feeds?offset=0&limit=20');
      expect([...first.json.data, ...second.json.data]).toEqual(both.json.data);
      const tail = await get('/feeds?offset=245&limit=100');
      expect(tail.json.data).toHaveLength(5);
      expect((await get('/feeds?offset=250')).json.data).toEqual([]);
    });

    it('filters by status as a comma list (ACTIVE%2CDELETED) or repeated parameter', async () => {
      const deleted = all.filter((f) => f.status === 'DELETED').length;
      const onlyDeleted = await get('/feeds?status=DELETED&limit=100');
      expect(onlyDeleted.json.data.every((f: { status: string }) => f.status === 'DELETED')).toBe(true);
      expect(onlyDeleted.json.data).toHaveLength(Math.min(100, deleted));
      const comma = await get('/feeds?status=ACTIVE%2CDELETED&offset=200');
      const repeated = await get('/feeds?status=ACTIVE&status=DELETED&offset=200');
      expect(comma.json.data).toHaveLength(50);
      expect(repeated.json.data).toEqual(comma.json.data);
      expect(fake.requests[1].url).toContain('status=ACTIVE%2CDELETED');
    });

    it('filters by created_after / created_before in YYYY-MM-DD, YYYYMMDD and ISO datetime', async () => {
      const expected = all.filter((f) => day(f.created_at) > Date.UTC(2023, 0, 1)).length;
      for (const v of ['2023-01-01', '20230101', '2023-01-01T00:00:00']) {
        const ids: string[] = [];
        for (let offset = 0; ; offset += 100) {
          const res = await get(`/feeds?created_after=${v}&offset=${offset}`);
          ids.push(...res.json.data.map((f: { id: string }) => f.id));
          if (res.json.data.length < 100) break;
        }
        expect(ids).toHaveLength(expected);
      }
      const before = await get('/feeds?created_before=2020-01-01');
      expect(before.json.data.length).toBe(
        all.filter((f) => day(f.created_at) < Date.UTC(2020, 0, 1)).length,
      );
      expect(before.json.data.every((f: { created_at: string }) => f.created_at < '2020-01-01')).toBe(true);
    });

    it('orders by created_order=DESC and filters by filter_id', async () => {
      const desc = await get('/feeds?created_order=DESC&limit=5');
      const newest = [...all].sort((a, b) => day(b.created_at) - day(a.created_at))[0];
      expect(desc.json.data[0].created_at).toBe(newest.created_at);
      const byFilter = await get('/feeds?filter_id=FL-3');
      expect(byFilter.json.data.length).toBe(all.filter((f) => f.filter_id === 'FL-3').length);
      expect(byFilter.json.data.length).toBeGreaterThan(0);
    });

    it.each([
      ['limit=0'],
      ['limit=101'],
      ['offset=-1'],
      ['status=GONE'],
      ['created_after=yesterday'],
      ['created_order=UP'],
    ])('answers 400 ResponseError for %s', async (q) => {
      const res = await get(`/feeds?${q}`);
      expect(res.status).toBe(400);
      expect(res.json.errors.code).toBe('INVALID_INPUT_PARAMETER');
      expect(res.json.errors.status).toBe(400);
    });

    it('GET /feeds/{id} answers a bare FeedInformation, 404 for an unknown id', async () => {
      const res = await get('/feeds/FD-2000');
      expect(res.json).toEqual(all[0]);
      const missing = await get('/feeds/FD-1');
      expect(missing.status).toBe(404);
      expect(missing.json.errors.code).toBe('NOT_FOUND');
    });
  });

  describe('layout', () => {
    it('GET /layout/tables/TB1207 answers LayoutFullMetadataResult', async () => {
      const res = await get('/layout/tables/TB1207');
      expect(res.status).toBe(200);
      expect(res.json).toEqual({
        data: [
          {
            metadata: { id: 'TB1207', name: 'Consumer Price Index: 2018=100' },
            ancestors: { database: 'WORLD', topic: 'TP301', section: 'SC3310', table: 'TB1207' },
          },
        ],
      });
    });

    it('answers 404 ResponseError for an unknown table', async () => {
      const res = await get('/layout/tables/TB99999');
      expect(res.status).toBe(404);
      expect(res.json).toEqual({
        errors: { status: 404, code: 'NOT_FOUND', message: 'Layout table TB99999 not found' },
      });
    });

    it('walks databases → topics → sections → tables', async () => {
      const dbs = await get('/layout/databases');
      expect(dbs.json.data[0]).toMatchObject({ subscribed: true, metadata: { id: 'WORLD' } });
      const topics = await get('/layout/databases/WORLD/topics');
      expect(topics.json.data[0].metadata.id).toBe('TP301');
      const sections = await get('/layout/topics/TP301/sections');
      expect(sections.json.data[0].metadata.id).toBe('SC3310');
      const tables = await get('/layout/sections/SC3310/tables');
      expect(tables.json.data.map((t: { metadata: { id: string } }) => t.metadata.id)).toContain('TB1207');
      const series = await get('/layout/tables/TB1207/series');
      expect(series.json.data).toHaveLength(10);
    });
  });

  describe('formats and languages', () => {
    const parser = new XMLParser();

    it('answers XML for format=xml, even with Accept: application/json (query wins)', async () => {
      const res = await get('/layout/tables/TB1207?format=xml', { accept: 'application/json' });
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toContain('application/xml');
      const doc = parser.parse(res.text);
      expect(doc.response.data.metadata.id).toBe('TB1207');
      expect(doc.response.data.ancestors.database).toBe('WORLD');
    });

    it('answers XML for Accept: application/xml', async () => {
      const res = await get('/feeds?limit=2', { accept: 'application/xml' });
      expect(res.text.startsWith('<?xml')).toBe(true);
      expect(parser.parse(res.text).response.data).toHaveLength(2);
    });

    it('answers 415 ResponseError for another format', async () => {
      const res = await get('/feeds?format=csv');
      expect(res.status).toBe(415);
      expect(res.json.errors).toMatchObject({ status: 415, code: 'UNSUPPORTED_MEDIA_TYPE' });
      expect((await get('/feeds', { accept: 'text/csv' })).status).toBe(415);
    });

    it('translates names for lang / Accept-Language, the query winning', async () => {
      const zh = await get('/layout/tables/TB1207?lang=zh');
      expect(zh.json.data[0].metadata.name).toBe('[zh] Consumer Price Index: 2018=100');
      const ru = await get('/layout/tables/TB1207', { 'accept-language': 'ru-RU,ru;q=0.9' });
      expect(ru.json.data[0].metadata.name).toBe('[ru] Consumer Price Index: 2018=100');
      const en = await get('/layout/tables/TB1207?lang=en', { 'accept-language': 'jp' });
      expect(en.json.data[0].metadata.name).toBe('Consumer Price Index: 2018=100');
      const unknown = await get('/layout/tables/TB1207?lang=fr');
      expect(unknown.json.data[0].metadata.name).toBe('Consumer Price Index: 2018=100');
    });
  });

  describe('series', () => {
    it('answers multi-id paths with partial UNSUBSCRIBED_SERIES errors on HTTP 200', async () => {
      const res = await get('/series/310901%2C310909/data?count=5');
      expect(res.status).toBe(200);
      expect(res.json.data).toHaveLength(1);
      expect(res.json.data[0].entityId).toBe('310901');
      expect(res.json.data[0].timePoints).toHaveLength(5);
      expect(res.json.data[0].timePoints[0]).toEqual({
        date: expect.stringMatching(/^\d{4}-\d{2}-\d{2}$/),
        value: expect.any(Number),
        lastUpdateTime: expect.any(String),
      });
      expect(res.json.errors).toEqual([
        { code: 'UNSUBSCRIBED_SERIES', message: 'series 310909 is not subscribed' },
      ]);
    });

    it('answers subscribed ids without errors, the same data every time', async () => {
      const a = await get('/series/310001,310002');
      const b = await get('/series/310001,310002');
      expect(a.json.errors).toBeUndefined();
      expect(a.json.data.map((s: { entityId: string }) => s.entityId)).toEqual(['310001', '310002']);
      expect(a.json).toEqual(b.json);
      expect(a.json.data[0].layout[0].table.id).toBe('TB1200');
    });

    it('narrows time points by start_date / end_date', async () => {
      const res = await get('/series/310001/data?start_date=2024-01-01&end_date=2024-12-31');
      const dates = res.json.data[0].timePoints.map((p: { date: string }) => p.date);
      expect(dates.length).toBeGreaterThan(0);
      expect(dates.every((d: string) => d >= '2024-01-01' && d <= '2024-12-31')).toBe(true);
    });

    it('answers 400 INVALID_SERIES_ID for a non-numeric id', async () => {
      const res = await get('/series/abc/data');
      expect(res.status).toBe(400);
      expect(res.json.errors.code).toBe('INVALID_SERIES_ID');
    });

    it('answers /series/{id}/visual with PNG bytes', async () => {
      const res = await get('/series/310001/visual');
      expect(res.headers['content-type']).toBe('image/png');
      expect(res.buf.subarray(1, 4).toString()).toBe('PNG');
    });

    it('searches with {"data":{total,items,facets}}', async () => {
      const res = await get('/series/search?keyword=consumer&limit=5');
      expect(res.json.data.total).toBeGreaterThan(5);
      expect(res.json.data.items).toHaveLength(5);
      expect(res.json.data.facets.map((f: { id: string }) => f.id)).toEqual(['frequency', 'country']);
    });
  });

  describe('writes', () => {
    it('creates (form), reads, patches (JSON) and deletes a feed', async () => {
      const created = await send(
        'POST',
        '/feeds',
        form({
          filter_id: 'FL-2',
          name: 'Sandbox feed',
          delivery: 'localftp',
          full_dump: 'True',
          frequency: '7',
        }),
      );
      expect(created.status).toBe(200);
      const feed = created.json.data;
      expect(feed).toMatchObject({
        name: 'Sandbox feed',
        filter_id: 'FL-2',
        status: 'ACTIVE',
        delivery_method: 'localftp',
        full_dump: true,
        frequency: 7,
      });
      expect((await get(`/feeds/${feed.id}`)).json).toEqual(feed);
      const patched = await send('PATCH', `/feeds/${feed.id}`, jsonBody({ name: 'Renamed', full_dump: 0 }));
      expect(patched.json).toMatchObject({ id: feed.id, name: 'Renamed', full_dump: false });
      const deleted = await call(`${fake.url}/feeds/${feed.id}?token=${TOKEN}`, { method: 'DELETE' });
      expect(deleted.json).toMatchObject({ id: feed.id, status: 'DELETED' });
      const listed = await get('/feeds?status=DELETED&created_order=DESC&limit=1');
      expect(listed.json.data[0].id).toBe(feed.id);
      const fields = new URLSearchParams(fake.requests[0].body.toString());
      expect(fields.get('filter_id')).toBe('FL-2');
    });

    it('rejects a feed without filter_id or with an over-long name', async () => {
      expect((await send('POST', '/feeds', form({ name: 'x' }))).status).toBe(400);
      const long = await send('POST', '/feeds', form({ filter_id: 'FL-1', name: 'n'.repeat(101) }));
      expect(long.status).toBe(400);
      expect(
        (await send('POST', '/feeds', { body: '{bad', headers: { 'content-type': 'application/json' } }))
          .status,
      ).toBe(400);
    });

    it('keeps user-defined series and time points per instance; reset() restores the baseline', async () => {
      const created = await send('POST', '/userdefined/series', jsonBody({ name: 'Mine', frequency: 'M' }));
      const id = created.json.data.id as string;
      await send(
        'POST',
        `/userdefined/series/${id}/timepoints`,
        jsonBody({ timepoints: [{ date: '2024-01-31', value: 1.5 }] }),
      );
      await send('POST', `/userdefined/series/${id}/timepoints`, form({ date: '2024-02-29', value: '2' }));
      await send('PATCH', `/userdefined/series/${id}/timepoints/2024-01-31`, form({ value: '3.25' }));
      const data = await get(`/userdefined/series/${id}/data`);
      expect(data.json.data[0].timePoints).toEqual([
        { date: '2024-01-31', value: 3.25 },
        { date: '2024-02-29', value: 2 },
      ]);
      await call(`${fake.url}/userdefined/series/${id}/timepoints/2024-02-29?token=${TOKEN}`, {
        method: 'DELETE',
      });
      expect((await get(`/userdefined/series/${id}/data`)).json.data[0].timePoints).toHaveLength(1);
      fake.reset();
      expect((await get(`/userdefined/series/${id}`)).status).toBe(404);
      expect((await get('/userdefined/series')).json.data.total).toBe(3);
    });
  });

  describe('vendor-shaped behaviour answers', () => {
    it('429 and 500 carry ResponseError bodies', async () => {
      fake.behave({ rateLimit: { afterCalls: 0, retryAfterSeconds: 7 } });
      const limited = await get('/feeds');
      expect(limited.status).toBe(429);
      expect(limited.headers['retry-after']).toBe('7');
      expect(limited.json).toEqual({
        errors: { status: 429, code: 'TOO_MANY_REQUESTS', message: 'Too many requests' },
      });
      fake.reset();
      fake.behave({ failWith: { status: 500 } });
      const failed = await get('/feeds');
      expect(failed.json).toEqual({ errors: { status: 500, code: 'ERR', message: 'Internal error' } });
    });
  });

  describe('every macro operation of spec §4.4', () => {
    const f = (fields: Record<string, string>) => form(fields);
    // Every row has three entries: a shorter row would make Jest pass its `done` callback as `body`.
    const ops: Array<[string, string, ReturnType<typeof form> | undefined]> = [
      ['GET', '/series/search', undefined],
      ['GET', '/series/310001', undefined],
      ['GET', '/series/310001/continuous', undefined],
      ['GET', '/series/310001/continuous/310001-C1/data', undefined],
      ['GET', '/series/310001/data', undefined],
      ['GET', '/series/310001/metadata', undefined],
      ['GET', '/series/310001/statistics', undefined],
      ['GET', '/series/310001/visual', undefined],
      ['GET', '/userdefined/series', undefined],
      ['GET', '/userdefined/series/UD-1', undefined],
      ['GET', '/userdefined/series/UD-1/data', undefined],
      ['POST', '/userdefined/series', f({ name: 'x' })],
      ['POST', '/userdefined/series/clone', f({ series_id: 'UD-1' })],
      ['POST', '/userdefined/series/UD-1/timepoints', f({ timepoints: '[{"date":"2025-01-31","value":1}]' })],
      ['PATCH', '/userdefined/series/UD-1', f({ name: 'y' })],
      ['PATCH', '/userdefined/series/UD-1/timepoints/2024-12-31', f({ value: '5' })],
      ['DELETE', '/userdefined/series/UD-2', undefined],
      ['DELETE', '/userdefined/series/UD-1/timepoints', undefined],
      ['DELETE', '/userdefined/series/UD-3/timepoints/2024-12-31', undefined],
      ['GET', '/insights', undefined],
      ['GET', '/insights/categories', undefined],
      ['GET', '/insights/categories/gallery', undefined],
      ['GET', '/insights/search', undefined],
      ['GET', '/insights/series/5001-1', undefined],
      ['GET', '/insights/series/5001-1/data', undefined],
      ['GET', '/insights/series/5001-1/metadata', undefined],
      ['GET', '/insights/5001', undefined],
      ['GET', '/insights/5001/download/xlsx', undefined],
      ['GET', '/insights/5001/series', undefined],
      ['GET', '/insights/5001/series/data', undefined],
      ['GET', '/insights/5001/series/metadata', undefined],
      ['GET', '/layout/databases', undefined],
      ['GET', '/layout/databases/WORLD/topics', undefined],
      ['GET', '/layout/sections/SC3310', undefined],
      ['GET', '/layout/sections/SC3310/tables', undefined],
      ['GET', '/layout/tables/TB1207', undefined],
      ['GET', '/layout/tables/TB1207/series', undefined],
      ['GET', '/layout/topics/TP301', undefined],
      ['GET', '/layout/topics/TP301/sections', undefined],
      ['GET', '/layout/TB1207/footnote', undefined],
      ['GET', '/dictionary', undefined],
      ['GET', '/dictionary/classifications', undefined],
      ['GET', '/dictionary/classifications/CL1/indicators', undefined],
      ['GET', '/dictionary/countries', undefined],
      ['GET', '/dictionary/countries/PL/sources', undefined],
      ['GET', '/dictionary/frequencies', undefined],
      ['GET', '/dictionary/geo', undefined],
      ['GET', '/dictionary/indicators', undefined],
      ['GET', '/dictionary/layouts', undefined],
      ['GET', '/dictionary/regions', undefined],
      ['GET', '/dictionary/release_statuses', undefined],
      ['GET', '/dictionary/release_types', undefined],
      ['GET', '/dictionary/sources', undefined],
      ['GET', '/dictionary/statuses', undefined],
      ['GET', '/dictionary/units', undefined],
      ['GET', '/filters', undefined],
      ['GET', '/filters/FL-1', undefined],
      ['POST', '/filters', f({ name: 'New filter', keyword: 'gdp' })],
      ['PATCH', '/filters/FL-1', f({ name: 'Renamed filter' })],
      ['DELETE', '/filters/FL-2', undefined],
      ['GET', '/dumps', undefined],
      ['GET', '/dumps/DP-700', undefined],
      ['POST', '/dumps', f({ feed_id: 'FD-2000' })],
      ['DELETE', '/dumps/DP-701', undefined],
      ['GET', '/feeds', undefined],
      ['GET', '/feeds/FD-2000', undefined],
      ['POST', '/feeds', f({ filter_id: 'FL-1' })],
      ['PATCH', '/feeds/FD-2000', f({ name: 'Renamed feed' })],
      ['DELETE', '/feeds/FD-2001', undefined],
      ['GET', '/releases', undefined],
      ['GET', '/releases/series/310001', undefined],
      ['GET', '/releases/RL24000/series', undefined],
    ];

    beforeAll(() => fake.reset());

    it.each(ops)('%s %s answers 200 with a data envelope', async (method, path, body) => {
      const res = await call(`${fake.url}${path}?token=${TOKEN}`, { method, ...(body ?? {}) });
      expect(res.status).toBe(200);
      if (path.endsWith('/visual')) return;
      if (/^\/feeds\/[^/]+$/.test(path)) expect(res.json.id).toBe(path.split('/')[2]);
      else expect(res.json).toHaveProperty('data');
      if (path.startsWith('/dumps') && method === 'GET' && path === '/dumps')
        expect(res.json.data).toHaveProperty('dumps');
    });

    it('answers an unknown path with 404 and a wrong method with 405', async () => {
      expect((await get('/nothing/here')).status).toBe(404);
      const res = await call(`${fake.url}/dictionary/units?token=${TOKEN}`, { method: 'POST' });
      expect(res.status).toBe(405);
      expect(res.headers.allow).toBe('GET');
    });
  });
});
