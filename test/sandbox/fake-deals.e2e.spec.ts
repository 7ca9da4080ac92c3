import { EMIS_CODES, EMIS_VERSION } from '../../src/sandbox/emis/fake-emis.upstream.js';
import { FakeDealsUpstream } from '../../src/sandbox/deals/fake-deals.upstream.js';
import { deals } from '../../src/sandbox/deals/deals.data.js';
import { call } from './http.js';

const TOKEN = 'sbx_dw_test';

describe('FakeDealsUpstream', () => {
  const fake = new FakeDealsUpstream({ token: TOKEN, username: 'u', password: 'p' });
  const get = (fnAndQuery: string) => {
    const sep = fnAndQuery.includes('?') ? '&' : '?';
    return call(`${fake.url}${fnAndQuery}${sep}token=${TOKEN}`);
  };

  beforeAll(async () => {
    await fake.start();
  });
  afterAll(async () => {
    await fake.close();
  });
  beforeEach(() => fake.reset());

  it('serves under /dw with the four deal functions', async () => {
    expect(fake.url).toMatch(/\/dw$/);
    const deal = deals()[0];
    const info = await get(`/DealInfo/getDealInfo/?dealId=${deal.id}`);
    expect(info.json.version).toBe(EMIS_VERSION);
    expect(info.json.data).toMatchObject({ id: deal.id, name: deal.name });
    // The PHP client ships no DealWatch classes: only the companies are typed (Dictionary\Company).
    expect(info.json.data._type).toBeUndefined();
    expect(info.json.data.advisors).toHaveLength(2);
    expect(info.json.data.targets[0]._type).toBe('Emis\\Entity\\Api\\Dictionary\\Company');

    const advisors = await get('/SearchAdvisors/getListAdvisors/?term=law&limit=5');
    expect(advisors.json.data.advisors.length).toBeGreaterThan(0);
    expect(advisors.json.data.advisors.every((a: { name: string }) => /Law/.test(a.name))).toBe(true);

    const companies = await get('/SearchCompanies/getListCompanies/?countries[0]=PL&limit=3');
    expect(companies.json.data.companies).toHaveLength(3);
    expect(companies.json.data.companies.every((c: { countryCode: string }) => c.countryCode === 'PL')).toBe(
      true,
    );

    const found = await get('/SearchDeal/getDeals/?dealTypes[0]=3&limit=100');
    const ipo = deals().filter((d) => d.dealType.id === 3);
    expect(found.json.data.total).toBe(ipo.length);
    expect(
      found.json.data.deals.every((d: { dealType: { name: string } }) => d.dealType.name === 'IPO'),
    ).toBe(true);
  });

  it('filters deals by announcement date and pages them', async () => {
    const res = await get('/SearchDeal/getDeals/?startDate=2022-01-01&endDate=2022-12-31&limit=100');
    const expected = deals().filter(
      (d) => d.announcedDate >= '2022-01-01' && d.announcedDate <= '2022-12-31',
    );
    expect(res.json.data.total).toBe(expected.length);
    const page2 = await get('/SearchDeal/getDeals/?limit=10&offset=10');
    expect(page2.json.data.deals).toHaveLength(10);
  });

  it('answers ApiError bodies on HTTP 200 for bad calls', async () => {
    const missing = await get('/DealInfo/getDealInfo/');
    expect(missing.status).toBe(200);
    expect(missing.json).toEqual({
      errors: [{ code: EMIS_CODES.PARAMETER_MISSING, detail: 'Missing parameter: dealId' }],
      // As a PHP stack in debug mode: the request and the credential echoed (the gateway scrubs them).
      debug: { requestUri: '/dw/DealInfo/getDealInfo/?token=sbx_dw_test', credential: 'sbx_dw_test' },
    });
    // PHP's json_encode: `/` as `\/`.
    expect(missing.text).toContain('"requestUri":"\\/dw\\/DealInfo\\/getDealInfo\\/?token=sbx_dw_test"');
    const unknown = await get('/DealInfo/getDealInfo/?dealId=1');
    expect(unknown.json.errors[0].code).toBe(EMIS_CODES.NOT_FOUND);
    const noKey = await call(`${fake.url}/SearchDeal/getDeals/`);
    expect(noKey.json.errors[0].code).toBe(EMIS_CODES.AUTH_REQUIRED);
    const badType = await get('/SearchDeal/getDeals/?dealTypes[0]=99');
    expect(badType.json.errors[0].code).toBe(EMIS_CODES.INVALID_PARAMETER);
  });

  it('accepts a sessionId from its own Auth/login/', async () => {
    const login = await call(`${fake.url}/Auth/login/?username=u&password=p`);
    const session = login.json.data.sessionId as string;
    const res = await call(
      `${fake.url}/SearchDeal/getDeals/?limit=1&sessionId=${encodeURIComponent(session)}`,
    );
    expect(res.json.data.deals).toHaveLength(1);
    expect(fake.logins).toBe(1);
  });

  it('serves the XML variant', async () => {
    const res = await get('/xml/SearchDeal/getDeals/?limit=1');
    expect(res.text).toMatch(/^<\?xml.*<response><data><total>\d+<\/total><deals>/);
  });
});
