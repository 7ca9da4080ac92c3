// JSON views of the fake Company v2's generated companies and statements.
import { createRng } from '../data/seeded.js';
import { COMPANY_STANDARDS, type CompanyRecord, type StatementRecord } from './company.data.js';

export const KIND_NAMES: Record<CompanyRecord['kind'], string> = {
  banking: 'Bank',
  insurance: 'Insurance company',
  'non-financial': 'Non-financial company',
};

export function searchItem(c: CompanyRecord): Record<string, unknown> {
  return {
    companyId: c.companyId,
    companyName: c.companyName,
    countryCode: c.countryCode,
    city: c.city,
    companyType: KIND_NAMES[c.kind],
    industryClass: c.industryClass,
    legalForm: c.legalForm,
    operationalStatus: c.operationalStatus,
  };
}

export function details(c: CompanyRecord): Record<string, unknown> {
  const rng = createRng(`company-details:${c.companyId}`);
  return {
    ...searchItem(c),
    companyName: c.companyName,
    localName: c.companyName.toUpperCase(),
    address: { city: c.city, countryCode: c.countryCode, street: `Main Street ${rng.int(1, 200)}` },
    externalIds: c.externalIds,
    incorporationYear: c.incorporationYear,
    website: c.website,
    ownerType: c.ownerType,
    employees: { number: c.employees, year: 2023 },
    latestFinancials: { revenue: String(c.revenueUsd), currency: 'USD', year: 2023 },
    executives: [
      {
        name: `Anna ${c.companyName.split(' ')[0] ?? 'Nowak'}`,
        position: { code: 'CEO', name: 'Chief Executive' },
      },
    ],
    ...(c.stockExchange
      ? {
          marketData: {
            stockExchange: c.stockExchange,
            latest: {
              turnover: String(rng.int(1e5, 1e8)),
              volume: String(rng.int(1e3, 1e6)),
              marketCapitalization: { value: String(c.revenueUsd * 2), currency: 'USD' },
              close: { value: String(rng.int(1, 500)), date: '2024-12-31' },
            },
          },
        }
      : {}),
  };
}

export function statementView(s: StatementRecord): Record<string, unknown> {
  const standard = COMPANY_STANDARDS.find((x) => x.id === s.standardId);
  return {
    statementId: s.statementId,
    companyId: s.companyId,
    year: s.year,
    period: s.period,
    financialStandard: { id: s.standardId, code: standard?.code, name: standard?.name },
    currency: { code: s.currency },
    consolidated: s.consolidated,
  };
}
