// Fake EMIS DealWatch data: deals between the sandbox's companies, and their advisors.
import { COUNTRIES } from '../data/countries.js';
import { createRng, DAY_MS, isoDate, memo } from '../data/seeded.js';
import { COMPANY_WORDS_A, companies, type CompanyRecord } from '../company/company.data.js';

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
