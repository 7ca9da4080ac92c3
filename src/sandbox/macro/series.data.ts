// Fake CEIC series: metadata and time points, generated per id on demand. A series in a layout table
// measures the table's concept, at its frequency, for one country; values follow the country's profile
// (macro-concepts.data.ts), so GDP, prices, rates and trade move plausibly and agree across series.
import { COUNTRIES, type IdName } from '../data/countries.js';
import { createRng, DAY_MS, isoDate, type Rng, round } from '../data/seeded.js';
import { tableOfSeries } from './layout.data.js';
import {
  CONCEPTS,
  type Concept,
  type CountryProfile,
  type Frequency,
  profileOf,
} from './macro-concepts.data.js';
import {
  MACRO_FREQUENCIES,
  MACRO_INDICATORS,
  MACRO_SOURCES,
  MACRO_STATUSES,
  MACRO_UNITS,
} from './macro-dictionaries.data.js';

export interface TimePoint {
  date: string;
  value: number;
  lastUpdateTime: string;
}

export interface SeriesInfo {
  id: string;
  name: string;
  frequency: IdName;
  unit: IdName;
  country: IdName;
  source: IdName;
  status: IdName;
  indicator: IdName;
  /** Series ids ending in 9 are not covered by the sandbox subscription. */
  subscribed: boolean;
  tableId?: string;
  /** Key of the concept (macro-concepts.data.ts) the series measures. */
  concept: string;
}

const SERIES_END = Date.UTC(2024, 11, 31);
const YEAR_MS = 365.25 * DAY_MS;
const BASE_2018 = Date.UTC(2018, 6, 1);

const byName = <T extends IdName>(list: readonly T[], name: string): T =>
  list.find((x) => x.name === name) ?? list[0];

export function seriesInfo(id: string): SeriesInfo {
  const num = Number(id);
  const table = Number.isFinite(num) ? tableOfSeries(num) : undefined;
  let concept: Concept;
  let frequency: Frequency;
  let countryId: string;
  if (table?.concept && table.frequency && table.countryIds) {
    concept = table.concept;
    frequency = table.frequency;
    countryId = table.countryIds[(num - Number(table.seriesIds[0])) % table.countryIds.length] ?? 'US';
  } else {
    // Series outside the layout (insights, user-defined sources) still measure one concept of one country.
    const rng = createRng(`series:${id}`);
    concept = rng.pick(CONCEPTS);
    frequency = concept.frequencies[0] ?? 'Y';
    countryId = rng.pick(COUNTRIES).id;
  }
  const country = COUNTRIES.find((c) => c.id === countryId) ?? COUNTRIES[0];
  // The central bank publishes monetary series, the statistics office the rest.
  const monetary = ['policy-rate', 'fx', 'reserves', 'money'].includes(concept.model);
  const sources = MACRO_SOURCES.filter((s) => s.countryId === country.id);
  const source = (monetary ? sources[1] : sources[0]) ?? { id: 'SRC100', name: 'NSO' };
  return {
    id,
    name: `${concept.name}: ${country.name}`,
    frequency: byName(
      MACRO_FREQUENCIES,
      frequency === 'M' ? 'Monthly' : frequency === 'Q' ? 'Quarterly' : 'Yearly',
    ),
    unit: byName(MACRO_UNITS, concept.unit),
    country: { id: country.id, name: country.name },
    source: { id: source.id, name: source.name },
    status: MACRO_STATUSES[0] ?? { id: 'T', name: 'Active' },
    indicator: (({ id: iid, name }) => ({ id: iid, name }))(byName(MACRO_INDICATORS, concept.indicator)),
    subscribed: !id.endsWith('9'),
    ...(table ? { tableId: table.id } : {}),
    concept: concept.key,
  };
}

function periodEnds(freq: string, count: number): number[] {
  const end = new Date(SERIES_END);
  const months = freq === 'Y' ? 12 : freq === 'Q' ? 3 : 1;
  const out: number[] = [];
  for (let i = count - 1; i >= 0; i--) {
    // Day 0 of the next month is the last day of this one.
    out.push(Date.UTC(end.getUTCFullYear(), end.getUTCMonth() + 1 - i * months, 0));
  }
  return out;
}

/** Growth over `years` at `pct` % a year. */
const grow = (pct: number, years: number): number => (1 + pct / 100) ** years;
/** Symmetric noise of about ±`pct` %. */
const noise = (rng: Rng, pct: number): number => 1 + ((rng.next() - 0.5) * 2 * pct) / 100;

/** The policy path every central bank in the sandbox follows: low in 2020–21, hikes in 2022–23. */
function policyPath(p: CountryProfile, ms: number): number {
  const year = new Date(ms).getUTCFullYear();
  const factor = year <= 2019 ? 0.7 : year <= 2021 ? 0.35 : year === 2022 ? 0.9 : year === 2023 ? 1.1 : 1;
  const step = p.policyRate < 1 ? 0.05 : 0.25;
  return Math.max(0, Math.round((p.policyRate * factor) / step) * step);
}

/** The COVID-19 shock of 2020 and the rebound of 2021, in percentage points of growth. */
function shock(ms: number): number {
  const year = new Date(ms).getUTCFullYear();
  return year === 2020 ? -7 : year === 2021 ? 4 : 0;
}

function value(concept: Concept, p: CountryProfile, ms: number, months: number, rng: Rng): number {
  const back = (SERIES_END - ms) / YEAR_MS; // years before the end of 2024
  const since2018 = (ms - BASE_2018) / YEAR_MS;
  const perQuarter = months / 3;
  const exportsAt = p.exports * months * grow(p.growth + 2, -back);
  switch (concept.model) {
    case 'gdp-nominal':
      return p.gdpQuarter * perQuarter * grow(p.growth + p.inflation, -back) * noise(rng, 0.8);
    case 'gdp-real':
      // 2015 prices: today's nominal level deflated by ten years of inflation.
      return (p.gdpQuarter * perQuarter * grow(p.growth, -back) * noise(rng, 0.6)) / grow(p.inflation, 9.5);
    case 'gdp-growth':
      return p.growth + shock(ms) + (rng.next() - 0.5) * 1.6;
    case 'price-index':
      return 100 * grow(concept.key === 'ppi' ? p.inflation * 1.1 : p.inflation, since2018) * noise(rng, 0.3);
    case 'inflation':
      return p.inflation * noise(rng, 15) + (rng.next() - 0.5) * 0.6;
    case 'production-index':
      return 100 * grow(p.growth, since2018) * (1 + shock(ms) / 100) * noise(rng, 1.5);
    case 'exports':
      return exportsAt * noise(rng, 3);
    case 'imports':
      return exportsAt * p.importRatio * noise(rng, 3);
    case 'trade-balance': {
      // Same draws as the export and import series would make apart: exports minus imports.
      const x = exportsAt * noise(rng, 3);
      return x - exportsAt * p.importRatio * noise(rng, 3);
    }
    case 'unemployment':
      return Math.max(
        1,
        p.unemployment + Math.sin(back * 1.3) * 0.6 + (shock(ms) < 0 ? 1.5 : 0) + (rng.next() - 0.5) * 0.3,
      );
    case 'employment':
      return p.employment * grow(0.6, -back) * (shock(ms) < 0 ? 0.98 : 1) * noise(rng, 0.4);
    case 'policy-rate':
      return policyPath(p, ms);
    case 'fx':
      return p.currency === 'USD' ? 1 : p.fx * grow(Math.max(0, p.inflation - 2.5), -back) * noise(rng, 2);
    case 'reserves':
      return p.reserves * grow(3, -back) * noise(rng, 1.5);
    case 'money':
      return p.gdpQuarter * 3 * grow(p.growth + p.inflation + 1, -back) * noise(rng, 0.5);
  }
}

/** Ascending time points: 120 monthly, 40 quarterly or 25 yearly, ending 2024-12-31. */
export function seriesTimePoints(info: SeriesInfo): TimePoint[] {
  const concept = CONCEPTS.find((c) => c.key === info.concept) ?? CONCEPTS[0];
  const freq = info.frequency.id;
  // Seeded by what the series measures, so the same concept, country and frequency in two tables agree.
  const rng = createRng(`points:${info.concept}:${info.country.id}:${freq}`);
  const count = freq === 'M' ? 120 : freq === 'Q' ? 40 : 25;
  const months = freq === 'M' ? 1 : freq === 'Q' ? 3 : 12;
  const profile = profileOf(info.country.id);
  return periodEnds(freq, count).map((ms) => ({
    date: isoDate(ms),
    value: round(value(concept, profile, ms, months, rng), 2),
    lastUpdateTime: `${isoDate(ms + (12 + ((ms / DAY_MS) % 20)) * DAY_MS)}T08:15:00`,
  }));
}
