// Fake EMIS DealWatch data: deals between the sandbox's companies, and their advisors.
import { COUNTRIES } from '../data/countries.js';
import { createRng, DAY_MS, isoDate, memo } from '../data/seeded.js';
import {
  COMPANY_WORDS_A,
  companies,
  type CompanyRecord,
  featuredCompanies,
} from '../company/company.data.js';

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

function dealName(type: string, buyer: CompanyRecord, target: CompanyRecord, stake: number): string {
  if (type === 'IPO') return `${target.companyName}: IPO`;
  if (type === 'Merger') return `${buyer.companyName} / ${target.companyName}: Merger`;
  if (type === 'Joint Venture') return `${buyer.companyName} and ${target.companyName}: Joint Venture`;
  return `${buyer.companyName} / ${target.companyName}: ${type} (${stake}%)`;
}

export const DEAL_COUNT = 150;

/**
 * Deals between the sandbox's companies: most targets and buyers are featured companies (so a company
 * overview finds deals), names spell out the companies in full, and every deal has one financial and
 * one legal advisor.
 */
export const deals = memo((): DealRecord[] => {
  const rng = createRng('deals');
  const comps = companies();
  const featured = featuredCompanies();
  const advs = advisors();
  const financial = advs.filter((a) => a.type === 'Financial');
  const legal = advs.filter((a) => a.type === 'Legal');
  let featuredNo = 0;
  return Array.from({ length: DEAL_COUNT }, (_, i) => {
    const target = i % 4 === 3 ? rng.pick(comps) : featured[featuredNo++ % featured.length];
    let buyer = rng.chance(0.5) ? rng.pick(featured) : rng.pick(comps);
    if (buyer.companyId === target.companyId) buyer = comps[(comps.indexOf(target) + 1) % comps.length];
    let seller = rng.pick(comps);
    if (seller.companyId === target.companyId || seller.companyId === buyer.companyId)
      seller = comps[(comps.indexOf(target) + 2) % comps.length];
    const type = rng.pick(DEAL_TYPES);
    const announced = Date.UTC(2019, 0, 1) + rng.int(0, 2000) * DAY_MS;
    const completed = rng.chance(0.7);
    const stake = rng.pick([100, 51, 75, 30, 10]);
    const ipo = type.id === 3;
    return {
      id: 600_000 + i,
      name: dealName(type.name, buyer, target, stake),
      dealType: type,
      status: completed ? 'Completed' : rng.pick(['Announced', 'Pending', 'Withdrawn']),
      announcedDate: isoDate(announced),
      ...(completed ? { completedDate: isoDate(announced + rng.int(20, 300) * DAY_MS) } : {}),
      value: rng.chance(0.8) ? { amount: rng.int(1, 5_000) * 100_000, currency: 'USD' } : null,
      stake,
      targets: [dealCompany(target)],
      buyers: ipo ? [] : [dealCompany(buyer)],
      sellers: ipo ? [] : [dealCompany(seller)],
      advisorIds: [rng.pick(financial).id, rng.pick(legal).id],
      countryCodes: [...new Set([target.countryCode, ...(ipo ? [] : [buyer.countryCode])])],
      industry: target.industryClass,
    };
  });
});

/** Every company a deal involves (targets, buyers, sellers), each once. */
export function dealCompanies(d: DealRecord): DealCompany[] {
  const seen = new Map<number, DealCompany>();
  for (const c of [...d.targets, ...d.buyers, ...d.sellers]) seen.set(c.id, c);
  return [...seen.values()];
}
