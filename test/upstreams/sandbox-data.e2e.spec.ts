import { testConsumer } from '../helpers/consumers.js';
import { http, withGateway } from '../helpers/gateway.js';

/**
 * The sandbox's data as a new user meets it through the gateway: macro series a first search finds and
 * that make sense, and one set of companies across the company, documents and deals interfaces.
 */
describe('sandbox data through the gateway', () => {
  const demo = testConsumer({ id: 'demo' });
  const gw = withGateway({ sandbox: true, consumers: [demo] });
  const get = (path: string) =>
    http(`${gw.url}${path}`, { headers: { authorization: `Bearer ${demo.key}` } });

  it.each(['GDP', 'CPI', 'unemployment'])('a keyword search for %s finds series', async (keyword) => {
    const res = await get(`/macro/series/search?keyword=${keyword}&limit=5`);
    expect(res.status).toBe(200);
    const { total, items } = res.json().data;
    expect(total).toBeGreaterThan(0);
    for (const item of items) expect(item.metadata.name.toLowerCase()).toContain(keyword.toLowerCase());
  });

  it('search → series → data: quarterly nominal GDP of Poland and Germany', async () => {
    for (const [geo, country] of [
      ['PL', 'Poland'],
      ['DE', 'Germany'],
    ]) {
      const search = await get(
        `/macro/series/search?keyword=nominal%20GDP&geo=${geo}&frequency=Q&subscribed_only=true&limit=1`,
      );
      expect(search.status).toBe(200);
      const found = search.json().data.items[0];
      expect(found.metadata).toMatchObject({
        name: `Nominal GDP: ${country}`,
        country: { id: geo, name: country },
        frequency: { id: 'Q' },
        unit: { name: 'Local currency bn' },
        indicator: { name: 'Gross Domestic Product' },
      });
      const series = await get(`/macro/series/${found.id}/metadata`);
      expect(series.json().data[0].metadata.name).toBe(`Nominal GDP: ${country}`);
      expect(series.json().data[0].layout[0].table.name).toBe('Gross Domestic Product: Local currency bn');
      const data = await get(`/macro/series/${found.id}/data?start_date=2020-01-01`);
      const points: { date: string; value: number }[] = data.json().data[0].timePoints;
      expect(points).toHaveLength(20); // five years of quarters
      expect(points[points.length - 1].date).toBe('2024-12-31');
      // Nominal GDP grows: the last year is larger than the first, and no quarter is negative.
      const sum = (year: string) =>
        points.filter((p) => p.date.startsWith(year)).reduce((n, p) => n + p.value, 0);
      expect(sum('2024')).toBeGreaterThan(sum('2020'));
      for (const p of points) expect(p.value).toBeGreaterThan(0);
    }
  });

  it('a company found by /company search has the same id and name in documents and deals, with documents and deals about it', async () => {
    const match = await get('/company/companies?country_code=PL&limit=1');
    const company = match.json().data.items[0] as { companyId: number; companyName: string };
    const term = encodeURIComponent(company.companyName);
    const inDocs = await get(`/documents/Search/findCompany/?term=${term}`);
    expect(inDocs.json().data.companies).toContainEqual(
      expect.objectContaining({ id: company.companyId, name: company.companyName }),
    );
    const inDeals = await get(`/deals/SearchCompanies/getListCompanies/?term=${term}`);
    expect(inDeals.json().data.companies).toContainEqual(
      expect.objectContaining({ id: company.companyId, name: company.companyName }),
    );
    // A company overview: its documents and its deals, found by the same id.
    const docs = await get(`/documents/Search/query/?companies[0]=${company.companyId}&limit=5`);
    expect(docs.json().data.total).toBeGreaterThan(0);
    for (const d of docs.json().data.documents)
      expect(d.companies.map((c: { id: number }) => c.id)).toContain(company.companyId);
    const deals = await get(`/deals/SearchDeal/getDeals/?companies[0]=${company.companyId}&limit=5`);
    expect(deals.json().data.total).toBeGreaterThan(0);
    const deal = deals.json().data.deals[0];
    // A deal overview: its advisors and every company involved, by name; the deal's name spells out its
    // target's.
    const info = await get(`/deals/DealInfo/getDealInfo/?dealId=${deal.id}`);
    expect(info.json().data.advisors).toHaveLength(2);
    expect(info.json().data.companies.map((c: { name: string }) => c.name)).toContain(company.companyName);
    expect(deal.name).toContain(deal.targets[0].name);
  });
});
