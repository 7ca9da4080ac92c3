// Deterministic generated data for the fake upstreams. Every value comes from a seeded PRNG, so two
// runs (and two processes of a fleet test) see the same ids, names and numbers. Collections are built
// lazily on first use and memoised; per-id data (series, statements) is generated on demand.

const DAY_MS = 86_400_000;

/** FNV-1a 32-bit hash: turns a string into a PRNG seed. */
export function hashSeed(text: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export interface Rng {
  /** Uniform in [0, 1). */
  next(): number;
  /** Integer in [min, max] inclusive. */
  int(min: number, max: number): number;
  pick<T>(items: readonly T[]): T;
  chance(p: number): boolean;
}

/** mulberry32: tiny, fast and good enough for test data. */
export function createRng(seed: number | string): Rng {
  let a = typeof seed === 'string' ? hashSeed(seed) : seed >>> 0;
  const next = (): number => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  return {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    pick: <T>(items: readonly T[]): T => items[Math.floor(next() * items.length)],
    chance: (p) => next() < p,
  };
}

function memo<T>(build: () => T): () => T {
  let value: T | undefined;
  return () => (value ??= build());
}

export function isoDate(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

export function isoDateTime(ms: number): string {
  return new Date(ms).toISOString().slice(0, 19);
}

function round(value: number, decimals: number): number {
  const f = 10 ** decimals;
  return Math.round(value * f) / f;
}

// ---------------------------------------------------------------------------------------------
// Shared vocabularies

export interface IdName {
  id: string;
  name: string;
}

const COUNTRIES = [
  { id: 'PL', name: 'Poland' },
  { id: 'HU', name: 'Hungary' },
  { id: 'CZ', name: 'Czech Republic' },
  { id: 'RO', name: 'Romania' },
  { id: 'TR', name: 'Turkey' },
  { id: 'CN', name: 'China' },
  { id: 'US', name: 'United States' },
  { id: 'DE', name: 'Germany' },
  { id: 'ID', name: 'Indonesia' },
  { id: 'BR', name: 'Brazil' },
  { id: 'IN', name: 'India' },
  { id: 'JP', name: 'Japan' },
] as const;

const INDICATORS = [
  'Consumer Price Index',
  'Gross Domestic Product',
  'Industrial Production',
  'Retail Sales',
  'Unemployment Rate',
  'Exports',
  'Imports',
  'Money Supply M2',
  'Policy Rate',
  'Foreign Reserves',
] as const;

const COMPANY_WORDS_A = [
  'Vistula',
  'Danube',
  'Carpathia',
  'Baltic',
  'Anatolia',
  'Pannonia',
  'Mazovia',
  'Bosphorus',
  'Silesia',
  'Transylvania',
  'Java',
  'Amazonia',
  'Yangtze',
  'Rhine',
] as const;
const COMPANY_WORDS_B = [
  'Energy',
  'Logistics',
  'Foods',
  'Steel',
  'Telecom',
  'Pharma',
  'Retail',
  'Capital',
  'Bank',
  'Insurance',
  'Motors',
  'Chemicals',
  'Textiles',
  'Software',
] as const;
const LEGAL_SUFFIX: Record<string, string> = {
  PL: 'S.A.',
  HU: 'Zrt.',
  CZ: 'a.s.',
  RO: 'S.A.',
  TR: 'A.S.',
  CN: 'Co., Ltd.',
  US: 'Inc.',
  DE: 'AG',
  ID: 'Tbk',
  BR: 'S.A.',
  IN: 'Ltd.',
  JP: 'K.K.',
};

// ---------------------------------------------------------------------------------------------
// Macro: dictionaries

export const MACRO_FREQUENCIES: readonly IdName[] = [
  { id: 'D', name: 'Daily' },
  { id: 'W', name: 'Weekly' },
  { id: 'M', name: 'Monthly' },
  { id: 'Q', name: 'Quarterly' },
  { id: 'H', name: 'Half-yearly' },
  { id: 'Y', name: 'Yearly' },
];

export const MACRO_UNITS: readonly IdName[] = [
  { id: 'U1', name: '2018=100' },
  { id: 'U2', name: 'USD mn' },
  { id: 'U3', name: '% YoY' },
  { id: 'U4', name: '%' },
  { id: 'U5', name: 'Local currency bn' },
  { id: 'U6', name: 'Person th' },
  { id: 'U7', name: 'Index' },
  { id: 'U8', name: '% pa' },
];

export const MACRO_STATUSES: readonly IdName[] = [
  { id: 'T', name: 'Active' },
  { id: 'C', name: 'Discontinued' },
  { id: 'B', name: 'Rebased' },
  { id: 'D', name: 'On-demand' },
];

export const MACRO_COUNTRIES: readonly (IdName & { isoCode: string })[] = COUNTRIES.map((c) => ({
  id: c.id,
  name: c.name,
  isoCode: c.id,
}));

export const MACRO_SOURCES: readonly (IdName & { countryId: string })[] = COUNTRIES.flatMap((c, i) => [
  { id: `SRC${100 + i * 2}`, name: `National Statistics Office of ${c.name}`, countryId: c.id },
  { id: `SRC${101 + i * 2}`, name: `Central Bank of ${c.name}`, countryId: c.id },
]);

export const MACRO_REGIONS: readonly IdName[] = [
  { id: 'R1', name: 'Europe' },
  { id: 'R2', name: 'Asia' },
  { id: 'R3', name: 'Americas' },
  { id: 'R4', name: 'Middle East & Africa' },
];

export const MACRO_CLASSIFICATIONS: readonly IdName[] = [
  { id: 'CL1', name: 'National Accounts' },
  { id: 'CL2', name: 'Prices' },
  { id: 'CL3', name: 'Labour Market' },
  { id: 'CL4', name: 'Foreign Trade' },
  { id: 'CL5', name: 'Monetary' },
];

export const MACRO_INDICATORS: readonly (IdName & { classificationId: string })[] = INDICATORS.map(
  (name, i) => ({
    id: `IN${1000 + i}`,
    name,
    classificationId: MACRO_CLASSIFICATIONS[[0, 1, 0, 0, 2, 3, 3, 4, 4, 4][i] ?? 0]?.id ?? 'CL1',
  }),
);

export const MACRO_GEO: readonly { id: string; type: string; title: string; isoCode: string }[] =
  COUNTRIES.map((c, i) => ({ id: `G${200 + i}`, type: 'country', title: c.name, isoCode: c.id }));

export const MACRO_RELEASE_STATUSES: readonly IdName[] = [
  { id: 'SCHEDULED', name: 'Scheduled' },
  { id: 'RELEASED', name: 'Released' },
  { id: 'DELAYED', name: 'Delayed' },
];

export const MACRO_RELEASE_TYPES: readonly IdName[] = [
  { id: 'NEW', name: 'New data' },
  { id: 'REVISION', name: 'Revision' },
];

// ---------------------------------------------------------------------------------------------
// Macro: layout tree (databases → topics → sections → tables)

export type LayoutKind = 'database' | 'topic' | 'section' | 'table';

export interface LayoutNode {
  id: string;
  name: string;
  kind: LayoutKind;
  parentId?: string;
  childIds: string[];
  /** Series ids, tables only. */
  seriesIds: string[];
}

export interface LayoutTree {
  databases: LayoutNode[];
  byId: ReadonlyMap<string, LayoutNode>;
}

const DATABASES: readonly IdName[] = [
  { id: 'WORLD', name: 'World Trend Plus' },
  { id: 'CN', name: 'China Premium Database' },
  { id: 'EMERGE', name: 'Emerging Markets Premium Database' },
  { id: 'GLOBAL', name: 'Global Database' },
];
const TOPIC_NAMES = ['Prices', 'National Accounts', 'Foreign Trade', 'Labour Market', 'Monetary'];
const SECTION_NAMES = ['Annual', 'Quarterly', 'Monthly', 'By Region'];
const TABLES_PER_SECTION = 8;
const SERIES_PER_TABLE = 10;
const FIRST_TABLE_SERIES_ID = 310000;

/** Ids: databases WORLD…, topics TP301…, sections SC3310…, tables TB1200… (WORLD/TP301/SC3310/TB1207 exists). */
export const layoutTree = memo((): LayoutTree => {
  const byId = new Map<string, LayoutNode>();
  const databases: LayoutNode[] = [];
  let topicNo = 0;
  let sectionNo = 0;
  let tableNo = 0;
  for (const db of DATABASES) {
    const dbNode: LayoutNode = { id: db.id, name: db.name, kind: 'database', childIds: [], seriesIds: [] };
    databases.push(dbNode);
    byId.set(dbNode.id, dbNode);
    for (let t = 0; t < 3; t++) {
      const topic: LayoutNode = {
        id: `TP${301 + topicNo}`,
        name: `${TOPIC_NAMES[topicNo % TOPIC_NAMES.length]}: ${db.name}`,
        kind: 'topic',
        parentId: dbNode.id,
        childIds: [],
        seriesIds: [],
      };
      topicNo++;
      dbNode.childIds.push(topic.id);
      byId.set(topic.id, topic);
      for (let s = 0; s < 2; s++) {
        const section: LayoutNode = {
          id: `SC${3310 + sectionNo}`,
          name: `${topic.name.split(':')[0]}: ${SECTION_NAMES[sectionNo % SECTION_NAMES.length]}`,
          kind: 'section',
          parentId: topic.id,
          childIds: [],
          seriesIds: [],
        };
        sectionNo++;
        topic.childIds.push(section.id);
        byId.set(section.id, section);
        for (let k = 0; k < TABLES_PER_SECTION; k++) {
          const indicator = INDICATORS[tableNo % INDICATORS.length] ?? 'Index';
          const table: LayoutNode = {
            id: `TB${1200 + tableNo}`,
            name: tableNo === 7 ? 'Consumer Price Index: 2018=100' : `${indicator}: ${section.name}`,
            kind: 'table',
            parentId: section.id,
            childIds: [],
            seriesIds: Array.from({ length: SERIES_PER_TABLE }, (_, i) =>
              String(FIRST_TABLE_SERIES_ID + tableNo * SERIES_PER_TABLE + i),
            ),
          };
          tableNo++;
          section.childIds.push(table.id);
          byId.set(table.id, table);
        }
      }
    }
  }
  return { databases, byId };
});

export interface LayoutAncestors {
  database?: string;
  topic?: string;
  section?: string;
  table?: string;
}

export function layoutAncestors(id: string): LayoutAncestors {
  const { byId } = layoutTree();
  const chain: LayoutNode[] = [];
  for (let node = byId.get(id); node; node = node.parentId ? byId.get(node.parentId) : undefined)
    chain.unshift(node);
  // Root first, so serialised ancestors read database → topic → section → table.
  const out: LayoutAncestors = {};
  for (const node of chain) out[node.kind] = node.id;
  return out;
}

function tableOfSeries(seriesId: number): LayoutNode | undefined {
  const tableNo = Math.floor((seriesId - FIRST_TABLE_SERIES_ID) / SERIES_PER_TABLE);
  return tableNo >= 0 ? layoutTree().byId.get(`TB${1200 + tableNo}`) : undefined;
}

// ---------------------------------------------------------------------------------------------
// Macro: series

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
}

const SERIES_END = Date.UTC(2024, 11, 31);

export function seriesInfo(id: string): SeriesInfo {
  const rng = createRng(`series:${id}`);
  const num = Number(id);
  const table = Number.isFinite(num) ? tableOfSeries(num) : undefined;
  const country = rng.pick(COUNTRIES);
  const indicator = rng.pick(MACRO_INDICATORS);
  const frequency = rng.pick(MACRO_FREQUENCIES.filter((f) => ['M', 'Q', 'Y'].includes(f.id)));
  const unit = rng.pick(MACRO_UNITS);
  const source = MACRO_SOURCES.find((s) => s.countryId === country.id) ?? { id: 'SRC100', name: 'NSO' };
  return {
    id,
    name: `${table ? table.name.split(':')[0] : indicator.name}: ${country.name}: ${unit.name}`,
    frequency,
    unit,
    country: { id: country.id, name: country.name },
    source: { id: source.id, name: source.name },
    status: MACRO_STATUSES[0] ?? { id: 'T', name: 'Active' },
    indicator: { id: indicator.id, name: indicator.name },
    subscribed: !id.endsWith('9'),
    ...(table ? { tableId: table.id } : {}),
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

/** Ascending time points: 120 monthly, 40 quarterly or 25 yearly, ending 2024-12-31. */
export function seriesTimePoints(info: SeriesInfo): TimePoint[] {
  const rng = createRng(`points:${info.id}`);
  const count = info.frequency.id === 'M' ? 120 : info.frequency.id === 'Q' ? 40 : 25;
  let value = 50 + rng.next() * 100;
  return periodEnds(info.frequency.id, count).map((ms) => {
    value = Math.max(0.1, value * (1 + (rng.next() - 0.45) * 0.04));
    return {
      date: isoDate(ms),
      value: round(value, 2),
      lastUpdateTime: `${isoDate(ms + 12 * DAY_MS)}T08:15:00`,
    };
  });
}

// ---------------------------------------------------------------------------------------------
// Macro: filters, feeds, dumps, insights, releases

export interface MacroFilterRecord {
  id: string;
  name: string;
  description: string;
  created_at: string;
  last_updated_at: string;
  creator_id: string;
  filter_details: { keyword: string; frequency: string[]; geo: string[] };
}

const buildMacroFilters = memo((): MacroFilterRecord[] => {
  const rng = createRng('macro-filters');
  return Array.from({ length: 12 }, (_, i) => {
    const country = COUNTRIES[i % COUNTRIES.length] ?? COUNTRIES[0];
    const indicator = INDICATORS[i % INDICATORS.length] ?? 'CPI';
    const created = Date.UTC(2018, 0, 1) + rng.int(0, 365 * 5) * DAY_MS;
    return {
      id: `FL-${i + 1}`,
      name: `${country.name} ${indicator}`,
      description: `${indicator} series for ${country.name}`,
      created_at: isoDateTime(created),
      last_updated_at: isoDateTime(created + rng.int(1, 400) * DAY_MS),
      creator_id: `U-${4400 + (i % 3)}`,
      filter_details: { keyword: indicator, frequency: [rng.pick(['M', 'Q', 'Y'])], geo: [country.id] },
    };
  });
});

export function macroFilters(): MacroFilterRecord[] {
  return structuredClone(buildMacroFilters());
}

export type FeedStatus = 'ACTIVE' | 'DELETED';

export interface FeedRecord {
  id: string;
  name: string;
  description: string;
  filter_id: string;
  filter_name: string;
  filter_description: string;
  status: FeedStatus;
  user_id: string;
  frequency: number;
  created_at: string;
  feed_updated_at: string;
  language: string;
  consolidation_method: string;
  delivery_method: string;
  delivery_format: string;
  delivery_path: string;
  user_ftp_url: string;
  user_ftp_username: string;
  notification_email: string;
  notification_url: string;
  notification_http_method: string;
  updated_after: string;
  full_dump: boolean;
  metadata_only: boolean;
}

export const FEED_COUNT = 250;

const buildFeeds = memo((): FeedRecord[] => {
  const rng = createRng('macro-feeds');
  const filters = buildMacroFilters();
  const start = Date.UTC(2019, 0, 1);
  const days = (Date.UTC(2024, 11, 31) - start) / DAY_MS;
  return Array.from({ length: FEED_COUNT }, (_, i) => {
    const filter = rng.pick(filters);
    const created = start + rng.int(0, days) * DAY_MS;
    const updated = created + rng.int(1, 120) * DAY_MS + 4 * 3_600_000;
    const ftp = rng.chance(0.5);
    return {
      id: `FD-${2000 + i}`,
      name: `${filter.name} feed ${i + 1}`,
      description: `Scheduled delivery of ${filter.description}`,
      filter_id: filter.id,
      filter_name: filter.name,
      filter_description: filter.description,
      status: rng.chance(0.7) ? 'ACTIVE' : 'DELETED',
      user_id: filter.creator_id,
      frequency: rng.pick([1, 7, 30]),
      created_at: isoDate(created),
      feed_updated_at: isoDateTime(updated),
      language: rng.pick(['en', 'en', 'zh', 'ru']),
      consolidation_method: rng.pick(['none', 'daily']),
      delivery_method: ftp ? 'localftp' : 'api',
      delivery_format: rng.pick(['csv', 'json', 'xlsx']),
      delivery_path: ftp ? `/in/ceic/${i}` : '',
      user_ftp_url: ftp ? 'sftp://ftp.example.org:22' : '',
      user_ftp_username: ftp ? 'atrium' : '',
      notification_email: 'data@example.org',
      notification_url: 'https://hooks.example.org/f',
      notification_http_method: 'POST',
      updated_after: isoDateTime(updated),
      full_dump: rng.chance(0.2),
      metadata_only: rng.chance(0.1),
    };
  });
});

/** A fresh, mutable copy of the 250 generated feeds (each fake instance keeps its own). */
export function macroFeeds(): FeedRecord[] {
  return structuredClone(buildFeeds());
}

export interface MacroDumpRecord {
  id: string;
  name: string;
  feed_id: string;
  status: string;
  progress: number;
  totalSeriesNumber: number;
  collectedSeriesNumber: number;
  downloadLink: string;
  downloadLinkExpiration: string;
  created: string;
}

const buildMacroDumps = memo((): Omit<MacroDumpRecord, 'downloadLink'>[] => {
  const rng = createRng('macro-dumps');
  const feeds = buildFeeds();
  return Array.from({ length: 15 }, (_, i) => {
    const feed = rng.pick(feeds);
    const total = rng.int(10, 3000);
    const created = Date.UTC(2024, 0, 1) + rng.int(0, 360) * DAY_MS;
    return {
      id: `DP-${700 + i}`,
      name: `Dump of ${feed.name}`,
      feed_id: feed.id,
      status: 'COMPLETED',
      progress: 100,
      totalSeriesNumber: total,
      collectedSeriesNumber: total,
      downloadLinkExpiration: isoDateTime(created + 7 * DAY_MS),
      created: isoDateTime(created),
    };
  });
});

export function macroDumps(): Omit<MacroDumpRecord, 'downloadLink'>[] {
  return structuredClone(buildMacroDumps());
}

export interface InsightRecord {
  id: string;
  name: string;
  description: string;
  categoryId: string;
  tags: string[];
  created: string;
  seriesIds: string[];
}

export const INSIGHT_CATEGORIES: readonly IdName[] = [
  { id: 'IC1', name: 'Economy' },
  { id: 'IC2', name: 'Markets' },
  { id: 'IC3', name: 'Trade' },
];

export const insights = memo((): InsightRecord[] => {
  const rng = createRng('insights');
  return Array.from({ length: 12 }, (_, i) => {
    const country = COUNTRIES[i % COUNTRIES.length] ?? COUNTRIES[0];
    const id = String(5001 + i);
    return {
      id,
      name: `${country.name} economic monitor`,
      description: `Key indicators for ${country.name}`,
      categoryId: INSIGHT_CATEGORIES[i % INSIGHT_CATEGORIES.length]?.id ?? 'IC1',
      tags: [country.id.toLowerCase(), rng.pick(['gdp', 'cpi', 'trade'])],
      created: isoDateTime(Date.UTC(2023, 0, 1) + rng.int(0, 500) * DAY_MS),
      seriesIds: Array.from({ length: 5 }, (_, k) => `${id}-${k + 1}`),
    };
  });
});

export interface ReleaseRecord {
  code: string;
  name: string;
  timepointDate: string;
  releaseDate: string;
  from: string;
  to: string;
  releaseType: string;
  releaseStatus: string;
  seriesIds: string[];
}

export const releases = memo((): ReleaseRecord[] => {
  const rng = createRng('releases');
  return Array.from({ length: 40 }, (_, i) => {
    const date = Date.UTC(2024, 0, 5) + i * 9 * DAY_MS;
    const indicator = INDICATORS[i % INDICATORS.length] ?? 'CPI';
    return {
      code: `RL${24000 + i}`,
      name: `${indicator} release`,
      timepointDate: isoDate(date - 35 * DAY_MS),
      releaseDate: isoDate(date),
      from: `${isoDate(date)}T09:00:00`,
      to: `${isoDate(date)}T10:00:00`,
      releaseType: rng.pick(MACRO_RELEASE_TYPES).id,
      releaseStatus: date < Date.UTC(2024, 9, 1) ? 'RELEASED' : 'SCHEDULED',
      seriesIds: Array.from({ length: 4 }, () => String(rng.int(310000, 311919))),
    };
  });
});

// ---------------------------------------------------------------------------------------------
// Company v2

export type CompanyKind = 'banking' | 'insurance' | 'non-financial';

export interface CompanyRecord {
  companyId: number;
  companyName: string;
  countryCode: string;
  city: string;
  kind: CompanyKind;
  industryClass: { code: string; name: string };
  legalForm: string;
  operationalStatus: string;
  ownerType: string;
  externalIds: { type: string; value: string }[];
  incorporationYear: number;
  employees: number;
  revenueUsd: number;
  website: string;
  /** Financial standards the company reports in (ids of COMPANY_STANDARDS). */
  standardIds: number[];
  stockExchange?: string;
}

export const COMPANY_STANDARDS: readonly { id: number; name: string; code: string }[] = [
  { id: 1, name: 'International Financial Reporting Standards', code: 'IFRS' },
  { id: 2, name: 'Local Accounting Standard', code: 'LOCAL' },
  { id: 3, name: 'US GAAP', code: 'USGAAP' },
];

export const COMPANY_ACCOUNTS: readonly { id: number; code: string; name: string }[] = [
  { id: 101, code: 'TA', name: 'Total Assets' },
  { id: 102, code: 'TL', name: 'Total Liabilities' },
  { id: 103, code: 'EQ', name: 'Total Equity' },
  { id: 104, code: 'NS', name: 'Net Sales' },
  { id: 105, code: 'OP', name: 'Operating Profit' },
  { id: 106, code: 'NP', name: 'Net Profit' },
  { id: 107, code: 'CA', name: 'Current Assets' },
  { id: 108, code: 'CL', name: 'Current Liabilities' },
  { id: 109, code: 'CS', name: 'Cash' },
  { id: 110, code: 'EM', name: 'Employees' },
];

export const INDUSTRY_CLASSES: readonly { code: string; name: string }[] = [
  { code: '6419', name: 'Other monetary intermediation' },
  { code: '6511', name: 'Life insurance' },
  { code: '3511', name: 'Production of electricity' },
  { code: '4941', name: 'Freight transport by road' },
  { code: '1089', name: 'Manufacture of other food products' },
  { code: '2410', name: 'Manufacture of basic iron and steel' },
  { code: '6110', name: 'Wired telecommunications activities' },
  { code: '2120', name: 'Manufacture of pharmaceutical preparations' },
  { code: '4711', name: 'Retail sale in non-specialised stores' },
  { code: '6201', name: 'Computer programming activities' },
];

export const COMPANY_COUNT = 200;

export const companies = memo((): CompanyRecord[] => {
  const rng = createRng('companies');
  return Array.from({ length: COMPANY_COUNT }, (_, i) => {
    const country = rng.pick(COUNTRIES);
    const a = rng.pick(COMPANY_WORDS_A);
    const b = i % 10 === 0 ? 'Bank' : i % 10 === 1 ? 'Insurance' : rng.pick(COMPANY_WORDS_B);
    const kind: CompanyKind = b === 'Bank' ? 'banking' : b === 'Insurance' ? 'insurance' : 'non-financial';
    const industry =
      kind === 'banking'
        ? INDUSTRY_CLASSES[0]
        : kind === 'insurance'
          ? INDUSTRY_CLASSES[1]
          : INDUSTRY_CLASSES[2 + (i % (INDUSTRY_CLASSES.length - 2))];
    const id = 1_000_000 + i * 37;
    const listed = rng.chance(0.3);
    return {
      companyId: id,
      companyName: `${a} ${b} ${i + 1} ${LEGAL_SUFFIX[country.id] ?? 'Ltd.'}`,
      countryCode: country.id,
      city: `${country.name} City ${1 + (i % 5)}`,
      kind,
      industryClass: industry ?? { code: '0000', name: 'Other' },
      legalForm: LEGAL_SUFFIX[country.id] ?? 'Ltd.',
      operationalStatus: rng.chance(0.9) ? 'Operational' : 'In liquidation',
      ownerType: rng.pick(['Private', 'State', 'Foreign']),
      externalIds: [
        { type: 'TAX_ID', value: `${country.id}${String(rng.int(1e8, 1e9 - 1))}` },
        { type: 'REG_NO', value: `R-${id}` },
      ],
      incorporationYear: rng.int(1950, 2020),
      employees: rng.int(5, 50_000),
      revenueUsd: rng.int(100_000, 5_000_000_000),
      website: `https://www.${a.toLowerCase()}-${b.toLowerCase()}-${i + 1}.example`,
      standardIds: [1, 2 + (i % 2)],
      ...(listed ? { stockExchange: `${country.id}SE` } : {}),
    };
  });
});

export function companyById(id: number): CompanyRecord | undefined {
  const i = (id - 1_000_000) / 37;
  const c = Number.isInteger(i) ? companies()[i] : undefined;
  return c?.companyId === id ? c : undefined;
}

export interface StatementRecord {
  statementId: number;
  companyId: number;
  year: number;
  period: string;
  standardId: number;
  currency: string;
  consolidated: boolean;
}

/** Statements of a company: years 2020–2023 in each of its standards; id = companyId × 10 + k. */
export function companyStatements(companyId: number): StatementRecord[] {
  const company = companyById(companyId);
  if (!company) return [];
  const out: StatementRecord[] = [];
  let k = 0;
  for (const standardId of company.standardIds) {
    for (const year of [2020, 2021, 2022, 2023]) {
      out.push({
        statementId: companyId * 10 + k++,
        companyId,
        year,
        period: 'Y',
        standardId,
        currency: standardId === 1 ? 'USD' : 'LOC',
        consolidated: standardId === 1,
      });
    }
  }
  return out;
}

export function statementById(statementId: number): StatementRecord | undefined {
  return companyStatements(Math.floor(statementId / 10)).find((s) => s.statementId === statementId);
}

export function statementAccounts(statement: StatementRecord): { id: number; code: string; value: number }[] {
  const rng = createRng(`accounts:${statement.statementId}`);
  return COMPANY_ACCOUNTS.map((a) => ({ id: a.id, code: a.code, value: rng.int(1_000, 10_000_000) }));
}

// ---------------------------------------------------------------------------------------------
// EMIS documents and DealWatch

export interface EmisEntity {
  id: number;
  code: string;
  name: string;
}

export const EMIS_COUNTRIES: readonly EmisEntity[] = COUNTRIES.map((c, i) => ({
  id: 10 + i,
  code: c.id,
  name: c.name,
}));

export const EMIS_LANGUAGES: readonly EmisEntity[] = [
  { id: 1, code: 'en', name: 'English' },
  { id: 2, code: 'pl', name: 'Polish' },
  { id: 3, code: 'hu', name: 'Hungarian' },
  { id: 4, code: 'tr', name: 'Turkish' },
  { id: 5, code: 'zh', name: 'Chinese' },
];

export const EMIS_FORMATS: readonly { id: number; name: string }[] = [
  { id: 1, name: 'HTML' },
  { id: 2, name: 'PDF' },
  { id: 3, name: 'DOC' },
  { id: 4, name: 'XLS' },
];

export const EMIS_INDUSTRIES: readonly EmisEntity[] = INDUSTRY_CLASSES.map((c, i) => ({
  id: 300 + i,
  code: c.code,
  name: c.name,
}));

export const EMIS_PUBLICATION_TYPES: readonly EmisEntity[] = [
  { id: 1, code: 'NEWS', name: 'News' },
  { id: 2, code: 'REPORT', name: 'Industry report' },
  { id: 3, code: 'FIN', name: 'Financial statement' },
  { id: 4, code: 'ANALYSIS', name: 'Analysis' },
];

export const EMIS_SOURCE_TYPES: readonly { id: number; name: string }[] = [
  { id: 1, name: 'Newspaper' },
  { id: 2, name: 'Newswire' },
  { id: 3, name: 'Company' },
  { id: 4, name: 'Government' },
];

export const EMIS_TOPICS: readonly { id: number; name: string }[] = [
  { id: 1, name: 'Mergers & Acquisitions' },
  { id: 2, name: 'Economy' },
  { id: 3, name: 'Retail' },
  { id: 4, name: 'Energy' },
  { id: 5, name: 'Banking' },
];

export interface EmisPublication {
  id: number;
  name: string;
  countryCode: string;
  languageCode: string;
  sourceTypeId: number;
}

export const emisPublications = memo((): EmisPublication[] =>
  COUNTRIES.flatMap((c, i) => [
    {
      id: 900 + i * 2,
      name: `${c.name} Business Daily`,
      countryCode: c.id,
      languageCode: 'en',
      sourceTypeId: 1,
    },
    { id: 901 + i * 2, name: `${c.name} Newswire`, countryCode: c.id, languageCode: 'en', sourceTypeId: 2 },
  ]),
);

export interface DocumentRecord {
  id: number;
  title: string;
  body: string;
  format: number;
  language: { code: string; name: string };
  date: string;
  updateDate: string;
  countries: EmisEntity[];
  companies: { id: number; name: string }[];
  topics: { id: number; name: string }[];
  industries: EmisEntity[];
  publication: { id: number; name: string };
  publicationTypes: EmisEntity[];
  sourceType: { id: number; name: string };
  files: { key: string; title: string; format: string }[];
  pages: number;
  size: number;
}

const HEADLINE_SUBJECTS = ['retail sales', 'industrial output', 'bank lending', 'exports', 'energy prices'];
const HEADLINE_VERBS = ['rise', 'fall', 'stabilise', 'surge', 'slow'];

export const DOCUMENT_COUNT = 300;

function emisDateTime(ms: number): string {
  return `${isoDateTime(ms)}+0000`;
}

export const documents = memo((): DocumentRecord[] => {
  const rng = createRng('documents');
  const pubs = emisPublications();
  const comps = companies();
  return Array.from({ length: DOCUMENT_COUNT }, (_, i) => {
    const country = rng.pick(EMIS_COUNTRIES);
    const subject = rng.pick(HEADLINE_SUBJECTS);
    const language = rng.chance(0.7) ? EMIS_LANGUAGES[0] : rng.pick(EMIS_LANGUAGES);
    const date = Date.UTC(2023, 0, 1) + rng.int(0, 700) * DAY_MS + rng.int(0, 23) * 3_600_000;
    const company = rng.pick(comps);
    const pub = pubs.find((p) => p.countryCode === country.code) ?? rng.pick(pubs);
    const format = rng.pick(EMIS_FORMATS);
    const id = 88_000 + i;
    return {
      id,
      title: `${country.name} ${subject} ${rng.pick(HEADLINE_VERBS)}`,
      body: `<p>${country.name}: ${subject} changed in the period. ${company.companyName} commented.</p>`,
      format: format.id,
      language: { code: language?.code ?? 'en', name: language?.name ?? 'English' },
      date: emisDateTime(date),
      updateDate: emisDateTime(date + rng.int(0, 48) * 3_600_000),
      countries: [country],
      companies: [{ id: company.companyId, name: company.companyName }],
      topics: [rng.pick(EMIS_TOPICS)],
      industries: [rng.pick(EMIS_INDUSTRIES)],
      publication: { id: pub.id, name: pub.name },
      publicationTypes: [rng.pick(EMIS_PUBLICATION_TYPES)],
      sourceType: EMIS_SOURCE_TYPES.find((s) => s.id === pub.sourceTypeId) ?? { id: 1, name: 'Newspaper' },
      files: format.id === 1 ? [] : [{ key: `F${id}-1`, title: `Document ${id}`, format: format.name }],
      pages: rng.int(1, 40),
      size: rng.int(2_000, 2_000_000),
    };
  });
});

export const DEAL_TYPES: readonly { id: number; name: string }[] = [
  { id: 1, name: 'Acquisition' },
  { id: 2, name: 'Merger' },
  { id: 3, name: 'IPO' },
  { id: 4, name: 'Joint Venture' },
  { id: 5, name: 'Private Placement' },
  { id: 6, name: 'Asset Sale' },
];

export interface AdvisorRecord {
  id: number;
  name: string;
  countryCode: string;
  type: string;
}

export const advisors = memo((): AdvisorRecord[] => {
  const rng = createRng('advisors');
  const kinds = ['Financial', 'Legal'];
  return Array.from({ length: 40 }, (_, i) => {
    const country = rng.pick(COUNTRIES);
    const type = kinds[i % 2] ?? 'Financial';
    const word = rng.pick(COMPANY_WORDS_A);
    return {
      id: 7_000 + i,
      name: type === 'Legal' ? `${word} & Partners Law ${i + 1}` : `${word} Capital Advisors ${i + 1}`,
      countryCode: country.id,
      type,
    };
  });
});

export interface DealCompany {
  id: number;
  name: string;
  countryCode: string;
}

export interface DealRecord {
  id: number;
  name: string;
  dealType: { id: number; name: string };
  status: string;
  announcedDate: string;
  completedDate?: string;
  value: { amount: number; currency: string } | null;
  stake: number;
  targets: DealCompany[];
  buyers: DealCompany[];
  sellers: DealCompany[];
  advisorIds: number[];
  countryCodes: string[];
  industry: { code: string; name: string };
}

function dealCompany(c: CompanyRecord): DealCompany {
  return { id: c.companyId, name: c.companyName, countryCode: c.countryCode };
}

export const deals = memo((): DealRecord[] => {
  const rng = createRng('deals');
  const comps = companies();
  const advs = advisors();
  return Array.from({ length: 150 }, (_, i) => {
    const target = rng.pick(comps);
    const buyer = rng.pick(comps);
    const seller = rng.pick(comps);
    const type = rng.pick(DEAL_TYPES);
    const announced = Date.UTC(2019, 0, 1) + rng.int(0, 2000) * DAY_MS;
    const completed = rng.chance(0.7);
    return {
      id: 600_000 + i,
      name: `${buyer.companyName.split(' ').slice(0, 2).join(' ')} / ${target.companyName.split(' ').slice(0, 2).join(' ')}: ${type.name}`,
      dealType: type,
      status: completed ? 'Completed' : rng.pick(['Announced', 'Pending', 'Withdrawn']),
      announcedDate: isoDate(announced),
      ...(completed ? { completedDate: isoDate(announced + rng.int(20, 300) * DAY_MS) } : {}),
      value: rng.chance(0.8) ? { amount: rng.int(1, 5_000) * 100_000, currency: 'USD' } : null,
      stake: rng.pick([100, 51, 75, 30, 10]),
      targets: [dealCompany(target)],
      buyers: [dealCompany(buyer)],
      sellers: type.id === 3 ? [] : [dealCompany(seller)],
      advisorIds: [rng.pick(advs).id, rng.pick(advs).id],
      countryCodes: [target.countryCode],
      industry: target.industryClass,
    };
  });
});
