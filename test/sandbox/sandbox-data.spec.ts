import { companies, featuredCompanies } from '../../src/sandbox/company/company.data.js';
import { dealCompanies, deals } from '../../src/sandbox/deals/deals.data.js';
import { COUNTRIES } from '../../src/sandbox/data/countries.js';
import { createRng, hashSeed } from '../../src/sandbox/data/seeded.js';
import { MACRO_INDICATORS, MACRO_UNITS } from '../../src/sandbox/macro/macro-dictionaries.data.js';
import { documents } from '../../src/sandbox/documents/documents.data.js';
import { macroFeeds } from '../../src/sandbox/macro/feeds.data.js';
import { layoutAncestors, layoutTree } from '../../src/sandbox/macro/layout.data.js';
import { seriesInfo, seriesTimePoints } from '../../src/sandbox/macro/series.data.js';

describe('sandbox data', () => {
  it('seeds a reproducible PRNG', () => {
    const a = createRng('x');
    const b = createRng('x');
    const seqA = [a.next(), a.next(), a.int(1, 6)];
    expect([b.next(), b.next(), b.int(1, 6)]).toEqual(seqA);
    expect(createRng('y').next()).not.toBe(seqA[0]);
    expect(hashSeed('abc')).toBe(hashSeed('abc'));
  });

  it('generates the same feeds each time, as independent copies', () => {
    const a = macroFeeds();
    const b = macroFeeds();
    expect(a).toEqual(b);
    a[0].name = 'changed';
    expect(macroFeeds()[0].name).not.toBe('changed');
  });

  it('builds the layout tree with WORLD/TP301/SC3310/TB1207', () => {
    expect(layoutTree().databases.map((d) => d.id)).toEqual(['WORLD', 'CN', 'EMERGE', 'GLOBAL']);
    expect(layoutAncestors('TB1207')).toEqual({
      database: 'WORLD',
      topic: 'TP301',
      section: 'SC3310',
      table: 'TB1207',
    });
    expect(layoutTree().byId.get('TB1207')!.seriesIds[0]).toBe('310070');
  });

  it('generates series deterministically, unsubscribed when the id ends in 9', () => {
    expect(seriesInfo('310070')).toEqual(seriesInfo('310070'));
    expect(seriesInfo('310079').subscribed).toBe(false);
    const points = seriesTimePoints(seriesInfo('310070'));
    expect(points[points.length - 1].date).toBe('2024-12-31');
    expect(points).toEqual(seriesTimePoints(seriesInfo('310070')));
  });

  it('generates companies and documents', () => {
    expect(companies()).toHaveLength(200);
    expect(new Set(companies().map((c) => c.kind))).toEqual(
      new Set(['banking', 'insurance', 'non-financial']),
    );
    expect(documents()).toHaveLength(300);
  });

  it('links the featured companies (two per country) to several documents and deals each, by id and name', () => {
    expect(featuredCompanies()).toHaveLength(2 * COUNTRIES.length);
    for (const c of featuredCompanies()) {
      const docs = documents().filter((d) => d.companies.some((x) => x.id === c.companyId));
      const involved = deals().filter((d) => dealCompanies(d).some((x) => x.id === c.companyId));
      expect(docs.length).toBeGreaterThanOrEqual(3);
      expect(involved.length).toBeGreaterThanOrEqual(3);
      for (const d of docs) expect(d.companies.find((x) => x.id === c.companyId)?.name).toBe(c.companyName);
      for (const d of involved)
        expect(dealCompanies(d).find((x) => x.id === c.companyId)?.name).toBe(c.companyName);
    }
  });

  describe('macro series', () => {
    const all = [...layoutTree().byId.values()].flatMap((t) => t.seriesIds.map(seriesInfo));

    it.each([
      'gdp-nominal',
      'gdp-real',
      'cpi',
      'unemployment',
      'policy-rate',
      'fx',
      'trade-balance',
      'reserves',
    ])('cover %s for every sandbox country with a subscribed series', (concept) => {
      for (const c of COUNTRIES) {
        expect(all.some((s) => s.concept === concept && s.country.id === c.id && s.subscribed)).toBe(true);
      }
    });

    it('agree with themselves: name, indicator, unit, country and table', () => {
      for (const s of all) {
        expect(s.name.endsWith(`: ${s.country.name}`)).toBe(true);
        expect(MACRO_INDICATORS.map((i) => i.name)).toContain(s.indicator.name);
        expect(MACRO_UNITS.map((u) => u.name)).toContain(s.unit.name);
        expect(layoutTree().byId.get(s.tableId!)!.name).toBe(`${s.indicator.name}: ${s.unit.name}`);
      }
    });

    it('have plausible values: CPI near 100 in 2018, rates and unemployment in range', () => {
      const of = (concept: string, country: string) =>
        all.find((s) => s.concept === concept && s.country.id === country && s.frequency.id !== 'Q')!;
      const cpi = seriesTimePoints(of('cpi', 'DE'));
      const cpi2018 = cpi.find((p) => p.date.startsWith('2018'))!.value;
      expect(cpi2018).toBeGreaterThan(95);
      expect(cpi2018).toBeLessThan(105);
      for (const p of seriesTimePoints(of('unemployment', 'PL'))) expect(p.value).toBeGreaterThan(1);
      for (const p of seriesTimePoints(of('policy-rate', 'US'))) {
        expect(p.value).toBeGreaterThanOrEqual(0);
        expect(p.value).toBeLessThan(10);
      }
      expect(seriesTimePoints(of('fx', 'US')).every((p) => p.value === 1)).toBe(true);
    });
  });
});
