// Fake EMIS Company v2 data: the sandbox's companies, their statements and accounts. Documents and
// DealWatch reference these same companies (ids and names), so the interfaces agree.
import { COUNTRIES } from '../data/countries.js';
import { createRng, memo } from '../data/seeded.js';

export const COMPANY_WORDS_A = [
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

/**
 * The companies the other interfaces talk about most: the first two of each country. Documents and
 * deals cite them often, so a company overview (details, financials, documents, deals) is never empty.
 */
export const featuredCompanies = memo((): CompanyRecord[] => {
  const out: CompanyRecord[] = [];
  for (const country of COUNTRIES) {
    out.push(
      ...companies()
        .filter((c) => c.countryCode === country.id)
        .slice(0, 2),
    );
  }
  return out;
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

/** Companies whose name contains `term` (any case; '' for all) in any of `countries` (none: all). */
export function companiesMatching(term: string, countries: readonly string[]): CompanyRecord[] {
  const t = term.toLowerCase();
  return companies().filter(
    (c) =>
      (t === '' || c.companyName.toLowerCase().includes(t)) &&
      (countries.length === 0 || countries.includes(c.countryCode)),
  );
}
