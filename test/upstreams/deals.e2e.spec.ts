import { FakeDealsUpstream } from '../../src/sandbox/deals/fake-deals.upstream.js';
import { deals } from '../../src/sandbox/deals/deals.data.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { http, startGateway, withGateway } from '../helpers/gateway.js';
import { oneCallPerRequest } from './isolation.js';

const UPSTREAM_TOKEN = 'sbx_dw_portal_key_8a41c0d3';
const USERNAME = 'sbx_user_dw';
const PASSWORD = 'sbx_pw_dw_0c2b66e1a9';

const reader = testConsumer({ id: 'reader', upstreams: new Set(['deals']) });
const outsider = testConsumer({ id: 'outsider', upstreams: new Set(['documents']) });

describe('deal interface end to end', () => {
  const fake = new FakeDealsUpstream({ token: UPSTREAM_TOKEN, username: USERNAME, password: PASSWORD });
  const gw = withGateway({
    upstreams: { deals: { fake, token: UPSTREAM_TOKEN } },
    env: oneCallPerRequest('DEALS'),
    consumers: [reader, outsider],
  });
  const dealId = deals()[0].id;
  beforeEach(() => {
    fake.errorStatus = 'http200';
  });

  const get = (path: string, key = reader.key) => gw.request(path, key);

  it.each([
    ['Authorization: Bearer', (k: string) => ({ headers: { authorization: `Bearer ${k}` }, query: '' })],
    ['X-API-Key', (k: string) => ({ headers: { 'x-api-key': k }, query: '' })],
    ['token query', (k: string) => ({ headers: {}, query: `&token=${k}` })],
    ['sessionId query (the EMIS client)', (k: string) => ({ headers: {}, query: `&sessionId=${k}` })],
  ])('key custody, %s: the upstream gets our portal key only', async (_n, pos) => {
    const p = pos(reader.key);
    const res = await http(`${gw.url}/dw/SearchDeal/getDeals/?countries[0]=PL${p.query}`, {
      headers: p.headers,
    });
    expect(res.status).toBe(200);
    expect(fake.requests).toHaveLength(1);
    const seen = fake.requests[0];
    expect(seen.query).toEqual([
      ['countries[0]', 'PL'],
      ['token', UPSTREAM_TOKEN],
    ]);
    expect(seen.url).not.toContain(reader.key);
    for (const v of Object.values(seen.headers)) expect(String(v)).not.toContain(reader.key);
    expect(res.text).not.toContain(UPSTREAM_TOKEN);
  });

  it.each([
    ['/deals/DealInfo/getDealInfo/', `dealId=${dealId}`],
    ['/deals/SearchAdvisors/getListAdvisors/', 'term=a'],
    ['/deals/SearchCompanies/getListCompanies/', 'countries=PL'],
    ['/dw/SearchDeal/getDeals/', 'dealTypes[0]=1'],
  ])('%s answers with the body intact (version, typed companies)', async (path, query) => {
    const res = await get(`${path}?${query}`);
    expect(res.status).toBe(200);
    const direct = await http(
      `${fake.url}${path.replace(/^\/(deals|dw)/, '')}?${query}&token=${UPSTREAM_TOKEN}`,
    );
    expect(res.text).toBe(direct.text);
    expect(res.json().version).toBe('1.3.2');
    expect(res.json().data).toBeDefined();
    expect(fake.requests[0].path).toBe(`/dw${path.replace(/^\/(deals|dw)/, '')}`);
  });

  describe('ApiError on HTTP 200 → a real status, errors[0].code the vendor’s', () => {
    it.each([
      ['/deals/DealInfo/getDealInfo/?dealId=999999', 404, 'NOT_FOUND', 3004],
      ['/deals/DealInfo/getDealInfo/', 400, 'UPSTREAM_BAD_REQUEST', 3002],
      ['/dw/SearchDeal/getDeals/?dealTypes[0]=77', 400, 'UPSTREAM_BAD_REQUEST', 3005],
    ])('%s → %d %s (%d)', async (path, status, code, vendorCode) => {
      const res = await get(path);
      expect(res.status).toBe(status);
      expect(res.json().error).toMatchObject({
        code,
        upstream: 'deals',
        upstreamStatus: 200,
        upstreamCode: vendorCode,
      });
      expect(res.json().errors).toEqual([{ code: vendorCode, detail: res.json().error.message }]);
    });

    it('a rejected portal key → 502 UPSTREAM_AUTH_FAILED, the vendor code kept, one call', async () => {
      fake.behave({
        failWith: { status: 200, body: { errors: [{ code: 2003, detail: 'Invalid token' }] }, times: 1 },
      });
      const res = await get('/deals/SearchDeal/getDeals/');
      expect(res.status).toBe(502);
      expect(res.json().errors[0].code).toBe(2003);
      expect(fake.calls()).toBe(1);
    });

    it('with HTTP statuses too (errorStatus http4xx)', async () => {
      fake.errorStatus = 'http4xx';
      const res = await get('/deals/DealInfo/getDealInfo/?dealId=999999');
      expect(res.status).toBe(404);
      expect(res.json().errors[0].code).toBe(3004);
    });

    it('an upstream 429 keeps Retry-After and an integer code', async () => {
      fake.behave({ rateLimit: { afterCalls: 0, retryAfterSeconds: 1 } });
      const res = await get('/deals/SearchDeal/getDeals/');
      expect(res.status).toBe(429);
      expect(res.headers['retry-after']).toBe('1');
      expect(res.json().errors).toEqual([{ code: 4029, detail: res.json().error.message }]);
      // The fleet cooldown answers by itself, still with an integer code; wait it out for the next tests.
      const cooling = await get('/deals/SearchAdvisors/getListAdvisors/');
      expect(cooling.status).toBe(429);
      expect(cooling.json().errors[0].code).toBe(429);
      expect(fake.calls()).toBe(1);
      fake.behave({ rateLimit: undefined });
      // The next tests expect the vendor to be called again: wait until the cooldown is over.
      await eventually(async () => (await get('/deals/SearchAdvisors/getListAdvisors/')).status === 200, {
        intervalMs: 100,
        what: 'the 429 cooldown to end',
      });
    });
  });

  it('XML goes to /dw/xml/… and comes back as XML', async () => {
    const res = await get('/deals/SearchAdvisors/getListAdvisors/?format=xml');
    expect(res.status).toBe(200);
    expect(res.headers['content-type']).toContain('xml');
    expect(fake.requests[0].path).toBe('/dw/xml/SearchAdvisors/getListAdvisors/');
    expect(fake.requests[0].query).toEqual([['token', UPSTREAM_TOKEN]]);
  });

  it('a consumer without the deal interface → 403 with an integer-coded errors array', async () => {
    const res = await get('/dw/SearchDeal/getDeals/', outsider.key);
    expect(res.status).toBe(403);
    expect(res.json().errors).toEqual([{ code: 403, detail: res.json().error.message }]);
    expect(fake.requests).toHaveLength(0);
  });

  it('with USERNAME/PASSWORD configured the deal interface uses the login step', async () => {
    const gw2 = await startGateway({
      env: {
        UPSTREAM_DEALS_BASE_URL: fake.url,
        UPSTREAM_DEALS_USERNAME: USERNAME,
        UPSTREAM_DEALS_PASSWORD: PASSWORD,
        ...oneCallPerRequest('DEALS'),
      },
      consumers: [reader.consumer],
    });
    try {
      const results = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          http(`${gw2.url}/dw/SearchDeal/getDeals/?offset=${i}&sessionId=${reader.key}`),
        ),
      );
      expect(results.map((r) => r.status)).toEqual(Array(10).fill(200));
      expect(fake.logins).toBe(1);
      const calls = fake.requests.filter((r) => r.path === '/dw/SearchDeal/getDeals/');
      for (const c of calls) {
        const sessions = c.query.filter(([k]) => k === 'sessionId');
        expect(sessions).toHaveLength(1);
        expect(sessions[0][1]).not.toBe(reader.key);
        expect(c.query.some(([k]) => k === 'token')).toBe(false);
      }
    } finally {
      await gw2.close();
    }
    expect(fake.requests.at(-1)!.path).toBe('/dw/Auth/logout/');
  });
});
