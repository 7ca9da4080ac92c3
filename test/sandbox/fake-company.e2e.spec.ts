import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { request } from 'undici';
import { companyErrorBody, FakeCompanyUpstream } from '../../src/sandbox/company/fake-company.upstream.js';
import { companies } from '../../src/sandbox/company/company.data.js';
import { eventually } from '../helpers/eventually.js';
import { call, form, jsonBody } from './http.js';

const TOKEN = 'sbx_company_test';

describe('FakeCompanyUpstream', () => {
  const fake = new FakeCompanyUpstream({ token: TOKEN });
  const get = (pathAndQuery: string) => {
    const sep = pathAndQuery.includes('?') ? '&' : '?';
    return call(`${fake.url}${pathAndQuery}${sep}token=${TOKEN}`);
  };
  const first = companies()[0];

  beforeAll(async () => {
    await fake.start();
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => fake.reset());

  it('serves under /v2/company', () => {
    expect(fake.url).toMatch(/\/v2\/company$/);
  });

  it('takes the key only as the token query parameter', async () => {
    const missing = await call(`${fake.url}/dictionary/countries`);
    expect(missing.status).toBe(401);
    expect(missing.json).toEqual({ error: { code: 'INVALID_TOKEN', message: 'Missing token' } });
    const header = await call(`${fake.url}/dictionary/countries`, { headers: { authorization: TOKEN } });
    expect(header.status).toBe(401);
    const wrong = await call(`${fake.url}/dictionary/countries?token=nope`);
    expect(wrong.json.error.message).toBe('Invalid token');
    expect((await get('/dictionary/countries')).status).toBe(200);
  });

  it('answers with {"data":{"items":[…]}} in camelCase', async () => {
    const countries = await get('/dictionary/countries');
    expect(countries.json.data.items[0]).toEqual({ countryCode: 'PL', name: 'Poland' });
    const match = await get(`/companies/match?company_name=${encodeURIComponent(first.companyName)}&limit=3`);
    expect(match.json.data.items[0]).toMatchObject({
      companyId: first.companyId,
      companyName: first.companyName,
      score: 0.95,
    });
    const one = await get(`/companies/${first.companyId}`);
    expect(one.json.data.items).toHaveLength(1);
    expect(one.json.data.items[0]).toMatchObject({
      companyId: first.companyId,
      countryCode: first.countryCode,
    });
  });

  it('matches by external_id and filters searches by kind and country', async () => {
    const ext = first.externalIds[0].value;
    const match = await get(`/companies/match?external_id=${ext}`);
    expect(match.json.data.items[0].companyId).toBe(first.companyId);
    const banks = await get('/companies/banking?limit=100');
    expect(banks.json.data.items.length).toBe(companies().filter((c) => c.kind === 'banking').length);
    expect(banks.json.data.items.every((c: { companyType: string }) => c.companyType === 'Bank')).toBe(true);
    const pl = await get('/companies?country_code=PL&limit=100');
    expect(pl.json.data.total).toBe(companies().filter((c) => c.countryCode === 'PL').length);
  });

  it('uses varied error shapes: 404 flat, 400 errors array', async () => {
    const missing = await get('/companies/42');
    expect(missing.status).toBe(404);
    expect(missing.json).toEqual({ message: 'Not found', code: 404 });
    const bad = await get('/companies?limit=0');
    expect(bad.status).toBe(400);
    expect(bad.json).toEqual({
      errors: [{ code: 'INVALID_PARAMETER', message: 'limit must be between 1 and 100' }],
    });
    fake.behave({ rateLimit: { afterCalls: 0, retryAfterSeconds: 3 } });
    const limited = await get('/companies');
    expect(limited.status).toBe(429);
    expect(limited.json).toEqual({ error: { code: 'RATE_LIMIT_EXCEEDED', message: 'Too many requests' } });
  });

  it('lets failWith script another error shape', async () => {
    fake.behave({
      failWith: {
        status: 401,
        body: companyErrorBody('errors-array', 401, 'TOKEN_EXPIRED', 'Token expired'),
        times: 1,
      },
    });
    const res = await get('/dictionary/currencies');
    expect(res.status).toBe(401);
    expect(res.json).toEqual({ errors: [{ code: 'TOKEN_EXPIRED', message: 'Token expired' }] });
  });

  it('reads statements and their accounts', async () => {
    const list = await get(`/companies/${first.companyId}/statements?year=2023`);
    expect(list.json.data.items.length).toBe(first.standardIds.length);
    const statementId = list.json.data.items[0].statementId as number;
    const accounts = await get(`/companies/statements/${statementId}/accounts?currency=EUR`);
    expect(accounts.json.data.items[0]).toMatchObject({ code: 'TA', currency: 'EUR' });
    const std = list.json.data.items[0].financialStandard.id as number;
    expect((await get(`/companies/statements/${statementId}/accounts/${std}`)).status).toBe(200);
    expect((await get(`/companies/statements/${statementId}/accounts/99`)).status).toBe(404);
  });

  it('creates, patches and deletes a saved search filter; reset() restores the seed', async () => {
    const created = await call(`${fake.url}/companies/search/filters?token=${TOKEN}`, {
      method: 'POST',
      ...jsonBody({ name: 'Turkish steel', criteria: { countryCode: ['TR'] } }),
    });
    const id = created.json.data.items[0].id as number;
    expect(created.json.data.items[0]).toMatchObject({
      name: 'Turkish steel',
      criteria: { countryCode: ['TR'] },
    });
    const patched = await call(`${fake.url}/companies/search/filters/${id}?token=${TOKEN}`, {
      method: 'PATCH',
      ...form({ name: 'Turkish steel makers' }),
    });
    expect(patched.json.data.items[0].name).toBe('Turkish steel makers');
    expect((await get('/companies/search/filters')).json.data.total).toBe(3);
    const deleted = await call(`${fake.url}/companies/search/filters/${id}?token=${TOKEN}`, {
      method: 'DELETE',
    });
    expect(deleted.json.data.items[0]).toMatchObject({ id, deleted: true });
    expect((await get(`/companies/search/filters/${id}`)).status).toBe(404);
    await call(`${fake.url}/companies/search/filters?token=${TOKEN}`, {
      method: 'POST',
      ...form({ name: 'tmp' }),
    });
    fake.reset();
    expect((await get('/companies/search/filters')).json.data.total).toBe(2);
    const noName = await call(`${fake.url}/companies/feeds?token=${TOKEN}`, { method: 'POST', ...form({}) });
    expect(noName.status).toBe(400);
  });

  it('streams external_download as a file with the configured size', async () => {
    const res = await get(`/companies/${first.companyId}/external_download/6419`);
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toBe(
      'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
    );
    expect(res.headers['content-disposition']).toBe(
      `attachment; filename="company-${first.companyId}-6419.xlsx"`,
    );
    expect(res.buf.length).toBe(64 * 1024);
    expect(res.buf.subarray(0, 2).toString()).toBe('PK');
  });

  it('streams a 50 MB external_download without growing memory by more than ~10 MB', async () => {
    const size = 50 * 1024 * 1024;
    const limit = 10 * 1024 * 1024;
    fake.behave({ fileBytes: size });
    // Measure retained memory only: collect garbage first, twice around a pause, because V8 frees the
    // backing stores of dead Buffers on a background sweeper that lags under load.
    setFlagsFromString('--expose-gc');
    const gc = runInNewContext('gc') as () => void;
    const retained = async () => {
      // Buffer memory is released in a sweep after the GC proper: the lower of two readings is the live size.
      let least = Infinity;
      for (let i = 0; i < 2; i++) {
        gc();
        await new Promise((resolve) => setImmediate(resolve));
        const m = process.memoryUsage();
        least = Math.min(least, m.heapUsed + m.arrayBuffers);
      }
      return least;
    };
    const before = await retained();
    const res = await request(
      `${fake.url}/companies/${first.companyId}/external_download/6419?token=${TOKEN}`,
    );
    expect(Number(res.headers['content-length'])).toBe(size);
    const chunks = res.body[Symbol.asyncIterator]();
    let bytes = ((await chunks.next()).value as Buffer).length;
    // Hold the download open: a fake that buffered the file would now hold ~50 MB of Buffers; a
    // streaming one is held back by socket backpressure.
    // Wait until the fake has stopped writing (its bytes written unchanged over three readings 50 ms apart).
    const written: number[] = [];
    await eventually(
      () => {
        written.push(fake.bytesWrittenOnOpenConnections);
        return written.length >= 3 && written.slice(-3).every((n) => n === written.at(-1));
      },
      { intervalMs: 50, what: 'the fake to stop writing' },
    );
    expect((await retained()) - before).toBeLessThan(limit);
    let midway: number | undefined;
    for (let next = await chunks.next(); !next.done; next = await chunks.next()) {
      bytes += (next.value as Buffer).length;
      if (midway === undefined && bytes >= size / 2) midway = (await retained()) - before;
    }
    expect(bytes).toBe(size);
    expect(midway).toBeLessThan(limit);
  });

  describe('every company operation of spec §4.4', () => {
    const id = companies()[3].companyId;
    const stmt = id * 10;
    const none = undefined;
    // Rows all have three entries (see fake-macro.e2e.spec.ts).
    const ops: Array<[string, string, ReturnType<typeof form> | undefined]> = [
      ['GET', '/companies', none],
      ['GET', '/companies/banking', none],
      ['GET', '/companies/insurance', none],
      ['GET', '/companies/non-financial', none],
      ['GET', '/companies/local/2', none],
      ['GET', '/companies/match?company_name=bank', none],
      ['GET', `/companies/${id}`, none],
      ['GET', `/companies/${id}/external_download/6419`, none],
      ['GET', `/companies/${id}/statements`, none],
      ['GET', `/companies/${id}/statements/1`, none],
      ['GET', `/companies/${id}/benchmark`, none],
      ['GET', `/companies/statements/${stmt}`, none],
      ['GET', `/companies/statements/${stmt}/accounts`, none],
      ['GET', `/companies/statements/${stmt}/accounts/1`, none],
      ['GET', '/dictionary/cities', none],
      ['GET', '/dictionary/company_types', none],
      ['GET', '/dictionary/countries', none],
      ['GET', '/dictionary/currencies', none],
      ['GET', '/dictionary/industries/classes', none],
      ['GET', '/dictionary/industries/classes/6419', none],
      ['GET', '/dictionary/legal_forms', none],
      ['GET', '/dictionary/market_segments', none],
      ['GET', '/dictionary/operational_statuses', none],
      ['GET', '/dictionary/owner_types', none],
      ['GET', '/dictionary/periods', none],
      ['GET', '/dictionary/regions', none],
      ['GET', '/dictionary/standards', none],
      ['GET', '/dictionary/standards/1', none],
      ['GET', '/dictionary/standards/1/accounts', none],
      ['GET', '/dictionary/standards/1/accounts/101', none],
      ['GET', '/dictionary/stock_exchanges', none],
      ['GET', '/companies/dumps', none],
      ['GET', '/companies/dumps/1', none],
      ['POST', '/companies/dumps', form({ name: 'd' })],
      ['DELETE', '/companies/dumps/1', none],
      ['GET', '/companies/feeds', none],
      ['GET', '/companies/feeds/1', none],
      ['POST', '/companies/feeds', form({ name: 'f' })],
      ['PATCH', '/companies/feeds/1', form({ name: 'g' })],
      ['DELETE', '/companies/feeds/1', none],
      ['GET', '/companies/search/filters', none],
      ['GET', '/companies/search/filters/1', none],
      ['POST', '/companies/search/filters', form({ name: 's' })],
      ['PATCH', '/companies/search/filters/1', form({ name: 't' })],
      ['DELETE', '/companies/search/filters/1', none],
    ];

    beforeAll(() => fake.reset());

    it.each(ops)('%s %s answers 200', async (method, path, body) => {
      const sep = path.includes('?') ? '&' : '?';
      const res = await call(`${fake.url}${path}${sep}token=${TOKEN}`, { method, ...(body ?? {}) });
      expect(res.status).toBe(200);
      if (path.includes('external_download')) return;
      if (path.endsWith('/benchmark')) expect(res.json.data.financial_scores).toHaveLength(3);
      else expect(Array.isArray(res.json.data.items)).toBe(true);
    });
  });
});
