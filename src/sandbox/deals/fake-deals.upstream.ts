// Fake EMIS DealWatch (design notes: upstreams.md §5): base path /dw, the four deal functions of the
// spec, Documents conventions (token or sessionId, ApiError bodies, `version` beside `data`). The PHP
// client ships no DealWatch classes, so answers carry no `_type` except on the companies, which are the
// client's Dictionary\Company (the same ids and names as the company and documents interfaces).
import { dateParam, emisArray } from '../fake-params.js';
import { typed } from '../emis/emis-classes.js';
import {
  EMIS_CODES,
  EmisError,
  type FakeEmisOptions,
  FakeEmisUpstream,
  emisInt,
  emisRequired,
} from '../emis/fake-emis.upstream.js';
import { companiesMatching } from '../company/company.data.js';
import {
  type AdvisorRecord,
  advisors,
  type DealCompany,
  dealCompanies,
  type DealRecord,
  deals,
  DEAL_TYPES,
} from './deals.data.js';

export type FakeDealsOptions = FakeEmisOptions;

function advisorView(a: AdvisorRecord): Record<string, unknown> {
  return { id: a.id, name: a.name, countryCode: a.countryCode, type: a.type };
}

const companyView = (c: DealCompany) => typed('company', c);

function dealView(d: DealRecord): Record<string, unknown> {
  const { advisorIds, targets, buyers, sellers, ...rest } = d;
  const byId = new Map(advisors().map((a) => [a.id, a]));
  return {
    ...rest,
    targets: targets.map(companyView),
    buyers: buyers.map(companyView),
    sellers: sellers.map(companyView),
    advisors: advisorIds.flatMap((id) => {
      const a = byId.get(id);
      return a ? [advisorView(a)] : [];
    }),
  };
}

function paging(params: URLSearchParams): { offset: number; limit: number } {
  return { offset: emisInt(params, 'offset', 0), limit: Math.min(emisInt(params, 'limit', 25), 100) };
}

function idsOf(params: URLSearchParams, name: string): number[] {
  const values = emisArray(params, name);
  if (values.some((v) => !/^\d+$/.test(v)))
    throw new EmisError(EMIS_CODES.INVALID_PARAMETER, `Invalid parameter: ${name}`);
  return values.map(Number);
}

export class FakeDealsUpstream extends FakeEmisUpstream {
  constructor(opts: FakeDealsOptions) {
    super('deals', '/dw', opts);
    this.registerDeals();
  }

  private registerDeals(): void {
    this.route('DealInfo/getDealInfo', ({ params, xml }) => {
      const raw = emisRequired(params.get('dealId') ?? params.get('id'), 'dealId');
      const deal = deals().find((d) => String(d.id) === raw);
      if (!deal) throw new EmisError(EMIS_CODES.NOT_FOUND, `Deal not found: ${raw}`);
      return this.ok(
        { ...dealView(deal), companies: dealCompanies(deal).map(companyView), floatInfo: null },
        xml,
      );
    });

    this.route('SearchAdvisors/getListAdvisors', ({ params, xml }) => {
      const term = (params.get('term') ?? params.get('name') ?? '').toLowerCase();
      const countries = emisArray(params, 'countries').map((c) => c.toUpperCase());
      const { offset, limit } = paging(params);
      const found = advisors().filter(
        (a) =>
          (term === '' || a.name.toLowerCase().includes(term)) &&
          (countries.length === 0 || countries.includes(a.countryCode)),
      );
      return this.ok(
        { total: found.length, advisors: found.slice(offset, offset + limit).map(advisorView) },
        xml,
      );
    });

    this.route('SearchCompanies/getListCompanies', ({ params, xml }) => {
      const term = (params.get('term') ?? params.get('name') ?? '').toLowerCase();
      const countries = emisArray(params, 'countries').map((c) => c.toUpperCase());
      const { offset, limit } = paging(params);
      const found = companiesMatching(term, countries);
      return this.ok(
        {
          total: found.length,
          companies: found.slice(offset, offset + limit).map((c) =>
            typed('company', {
              id: c.companyId,
              name: c.companyName,
              countryCode: c.countryCode,
              industry: c.industryClass,
            }),
          ),
        },
        xml,
      );
    });

    this.route('SearchDeal/getDeals', ({ params, xml }) => {
      const term = (params.get('term') ?? '').toLowerCase();
      const countries = emisArray(params, 'countries').map((c) => c.toUpperCase());
      const types = emisArray(params, 'dealTypes');
      if (types.some((t) => !DEAL_TYPES.some((d) => String(d.id) === t))) {
        throw new EmisError(EMIS_CODES.INVALID_PARAMETER, 'Invalid parameter: dealTypes');
      }
      // Deals involving any of these company ids (target, buyer or seller) or advisor ids.
      const companyIds = idsOf(params, 'companies');
      const advisorIds = idsOf(params, 'advisors');
      const start = dateParam(params.get('startDate'));
      const end = dateParam(params.get('endDate'));
      if (Number.isNaN(start) || Number.isNaN(end)) {
        throw new EmisError(EMIS_CODES.INVALID_PARAMETER, 'Invalid parameter: startDate/endDate');
      }
      const { offset, limit } = paging(params);
      const found = deals()
        .filter(
          (d) =>
            (term === '' || d.name.toLowerCase().includes(term)) &&
            (countries.length === 0 || d.countryCodes.some((c) => countries.includes(c))) &&
            (types.length === 0 || types.includes(String(d.dealType.id))) &&
            (companyIds.length === 0 || dealCompanies(d).some((c) => companyIds.includes(c.id))) &&
            (advisorIds.length === 0 || d.advisorIds.some((a) => advisorIds.includes(a))) &&
            (start === undefined || Date.parse(d.announcedDate) >= start) &&
            (end === undefined || Date.parse(d.announcedDate) <= end),
        )
        .sort((a, b) => b.announcedDate.localeCompare(a.announcedDate) || a.id - b.id);
      return this.ok({ total: found.length, deals: found.slice(offset, offset + limit).map(dealView) }, xml);
    });
  }
}
