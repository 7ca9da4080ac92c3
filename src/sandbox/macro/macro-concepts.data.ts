// What the fake CEIC's series measure: one concept per kind of series (indicator, unit, frequencies,
// how values move) and one economic profile per sandbox country, so names, indicators, units,
// frequencies, countries and values agree with each other.

export type Frequency = 'M' | 'Q' | 'Y';

/** How a concept's values are generated from the country profile. */
export type ValueModel =
  | 'gdp-nominal'
  | 'gdp-real'
  | 'gdp-growth'
  | 'price-index'
  | 'inflation'
  | 'production-index'
  | 'exports'
  | 'imports'
  | 'trade-balance'
  | 'unemployment'
  | 'employment'
  | 'policy-rate'
  | 'fx'
  | 'reserves'
  | 'money';

export interface Concept {
  key: string;
  /** Series name before the country, e.g. `Real GDP` in `Real GDP: Poland`. */
  name: string;
  indicator: string;
  unit: string;
  /** Frequencies this concept exists in; the first is its natural one. */
  frequencies: readonly Frequency[];
  /** Flows (GDP, trade) add up over a period; stocks and rates do not. */
  flow: boolean;
  model: ValueModel;
}

export const TOPICS = ['Prices', 'National Accounts', 'Foreign Trade', 'Labour Market', 'Monetary'] as const;
export type Topic = (typeof TOPICS)[number];

/** Concepts by layout topic; the order fixes which concept each table of a section holds. */
export const CONCEPTS_BY_TOPIC = {
  Prices: [
    {
      key: 'cpi-yoy',
      name: 'Consumer Price Index (CPI): YoY',
      indicator: 'Consumer Price Index',
      unit: '% YoY',
      frequencies: ['M', 'Q', 'Y'],
      flow: false,
      model: 'inflation',
    },
    {
      key: 'cpi',
      name: 'Consumer Price Index (CPI)',
      indicator: 'Consumer Price Index',
      unit: '2018=100',
      frequencies: ['M', 'Q', 'Y'],
      flow: false,
      model: 'price-index',
    },
    {
      key: 'ppi',
      name: 'Producer Price Index (PPI)',
      indicator: 'Producer Price Index',
      unit: '2018=100',
      frequencies: ['M', 'Q', 'Y'],
      flow: false,
      model: 'price-index',
    },
  ],
  'National Accounts': [
    {
      key: 'gdp-nominal',
      name: 'Nominal GDP',
      indicator: 'Gross Domestic Product',
      unit: 'Local currency bn',
      frequencies: ['Q', 'Y'],
      flow: true,
      model: 'gdp-nominal',
    },
    {
      key: 'gdp-real',
      name: 'Real GDP',
      indicator: 'Gross Domestic Product',
      unit: 'Local currency bn, 2015 prices',
      frequencies: ['Q', 'Y'],
      flow: true,
      model: 'gdp-real',
    },
    {
      key: 'gdp-growth',
      name: 'Real GDP Growth',
      indicator: 'Gross Domestic Product',
      unit: '% YoY',
      frequencies: ['Q', 'Y'],
      flow: false,
      model: 'gdp-growth',
    },
    {
      key: 'ip',
      name: 'Industrial Production Index',
      indicator: 'Industrial Production',
      unit: '2018=100',
      frequencies: ['M', 'Q', 'Y'],
      flow: false,
      model: 'production-index',
    },
  ],
  'Foreign Trade': [
    {
      key: 'exports',
      name: 'Exports',
      indicator: 'Exports',
      unit: 'USD mn',
      frequencies: ['M', 'Q', 'Y'],
      flow: true,
      model: 'exports',
    },
    {
      key: 'imports',
      name: 'Imports',
      indicator: 'Imports',
      unit: 'USD mn',
      frequencies: ['M', 'Q', 'Y'],
      flow: true,
      model: 'imports',
    },
    {
      key: 'trade-balance',
      name: 'Trade Balance',
      indicator: 'Trade Balance',
      unit: 'USD mn',
      frequencies: ['M', 'Q', 'Y'],
      flow: true,
      model: 'trade-balance',
    },
  ],
  'Labour Market': [
    {
      key: 'unemployment',
      name: 'Unemployment Rate',
      indicator: 'Unemployment Rate',
      unit: '%',
      frequencies: ['M', 'Q', 'Y'],
      flow: false,
      model: 'unemployment',
    },
    {
      key: 'employment',
      name: 'Employment',
      indicator: 'Employment',
      unit: 'Person th',
      frequencies: ['Q', 'Y'],
      flow: false,
      model: 'employment',
    },
  ],
  Monetary: [
    {
      key: 'policy-rate',
      name: 'Policy Rate',
      indicator: 'Policy Rate',
      unit: '% pa',
      frequencies: ['M', 'Q', 'Y'],
      flow: false,
      model: 'policy-rate',
    },
    {
      key: 'fx',
      name: 'Exchange Rate against USD',
      indicator: 'Exchange Rate',
      unit: 'Local currency per USD',
      frequencies: ['M', 'Q', 'Y'],
      flow: false,
      model: 'fx',
    },
    {
      key: 'reserves',
      name: 'Foreign Reserves',
      indicator: 'Foreign Reserves',
      unit: 'USD mn',
      frequencies: ['M', 'Q', 'Y'],
      flow: false,
      model: 'reserves',
    },
    {
      key: 'm2',
      name: 'Money Supply M2',
      indicator: 'Money Supply M2',
      unit: 'Local currency bn',
      frequencies: ['M', 'Q', 'Y'],
      flow: false,
      model: 'money',
    },
  ],
} as const satisfies Record<Topic, readonly Concept[]>;

export const CONCEPTS: readonly Concept[] = TOPICS.flatMap((t): readonly Concept[] => CONCEPTS_BY_TOPIC[t]);

export interface CountryProfile {
  currency: string;
  /** Nominal GDP of the last quarter of 2024, local currency bn. */
  gdpQuarter: number;
  /** Real growth and inflation, % a year. */
  growth: number;
  inflation: number;
  unemployment: number;
  policyRate: number;
  /** Local currency per USD at the end of 2024. */
  fx: number;
  /** Monthly exports, USD mn, and the share of them imports make up. */
  exports: number;
  importRatio: number;
  reserves: number;
  /** Employed persons, thousands. */
  employment: number;
}

export const COUNTRY_PROFILES = {
  PL: {
    currency: 'PLN',
    gdpQuarter: 960,
    growth: 3.2,
    inflation: 4.5,
    unemployment: 5.1,
    policyRate: 5.75,
    fx: 4.0,
    exports: 30_000,
    importRatio: 1.02,
    reserves: 190_000,
    employment: 16_800,
  },
  HU: {
    currency: 'HUF',
    gdpQuarter: 21_000,
    growth: 2.3,
    inflation: 6.5,
    unemployment: 4.2,
    policyRate: 6.5,
    fx: 365,
    exports: 13_000,
    importRatio: 0.97,
    reserves: 42_000,
    employment: 4_700,
  },
  CZ: {
    currency: 'CZK',
    gdpQuarter: 2_000,
    growth: 2.1,
    inflation: 4.0,
    unemployment: 2.9,
    policyRate: 4.0,
    fx: 23.5,
    exports: 20_000,
    importRatio: 0.96,
    reserves: 145_000,
    employment: 5_200,
  },
  RO: {
    currency: 'RON',
    gdpQuarter: 440,
    growth: 3.8,
    inflation: 7.0,
    unemployment: 5.6,
    policyRate: 6.5,
    fx: 4.7,
    exports: 8_000,
    importRatio: 1.3,
    reserves: 63_000,
    employment: 7_700,
  },
  TR: {
    currency: 'TRY',
    gdpQuarter: 11_000,
    growth: 4.6,
    inflation: 30,
    unemployment: 9.5,
    policyRate: 35,
    fx: 34,
    exports: 21_000,
    importRatio: 1.25,
    reserves: 95_000,
    employment: 32_000,
  },
  CN: {
    currency: 'CNY',
    gdpQuarter: 34_000,
    growth: 5.6,
    inflation: 1.8,
    unemployment: 5.1,
    policyRate: 3.45,
    fx: 7.2,
    exports: 280_000,
    importRatio: 0.75,
    reserves: 3_250_000,
    employment: 740_000,
  },
  US: {
    currency: 'USD',
    gdpQuarter: 7_300,
    growth: 2.3,
    inflation: 2.8,
    unemployment: 4.1,
    policyRate: 4.5,
    fx: 1,
    exports: 170_000,
    importRatio: 1.45,
    reserves: 240_000,
    employment: 161_000,
  },
  DE: {
    currency: 'EUR',
    gdpQuarter: 1_080,
    growth: 1.1,
    inflation: 2.6,
    unemployment: 5.8,
    policyRate: 3.15,
    fx: 0.96,
    exports: 140_000,
    importRatio: 0.85,
    reserves: 295_000,
    employment: 46_000,
  },
  ID: {
    currency: 'IDR',
    gdpQuarter: 5_500_000,
    growth: 5.0,
    inflation: 3.2,
    unemployment: 5.3,
    policyRate: 6.0,
    fx: 16_000,
    exports: 22_000,
    importRatio: 0.85,
    reserves: 150_000,
    employment: 142_000,
  },
  BR: {
    currency: 'BRL',
    gdpQuarter: 3_000,
    growth: 2.2,
    inflation: 5.0,
    unemployment: 7.0,
    policyRate: 12.25,
    fx: 6.1,
    exports: 28_000,
    importRatio: 0.75,
    reserves: 330_000,
    employment: 103_000,
  },
  IN: {
    currency: 'INR',
    gdpQuarter: 85_000,
    growth: 6.6,
    inflation: 5.4,
    unemployment: 7.8,
    policyRate: 6.5,
    fx: 85,
    exports: 37_000,
    importRatio: 1.5,
    reserves: 640_000,
    employment: 560_000,
  },
  JP: {
    currency: 'JPY',
    gdpQuarter: 150_000,
    growth: 0.7,
    inflation: 2.5,
    unemployment: 2.5,
    policyRate: 0.25,
    fx: 157,
    exports: 60_000,
    importRatio: 1.05,
    reserves: 1_230_000,
    employment: 67_800,
  },
} as const satisfies Record<string, CountryProfile>;

export type CountryCode = keyof typeof COUNTRY_PROFILES;

export function profileOf(countryCode: string): CountryProfile {
  return (COUNTRY_PROFILES as Record<string, CountryProfile>)[countryCode] ?? COUNTRY_PROFILES.US;
}
