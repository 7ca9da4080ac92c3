import { CACHE_TTL } from '../../proxy/cache-ttl.js';
import type { RouteDefinition } from '../../proxy/pipeline.types.js';

const { dictionary, series, userList } = CACHE_TTL;

/**
 * Every operation of the company data interface v2 (spec §4.4), upstream paths unchanged below `/company`.
 * Writes carry no TTL (never cached); `external_download` answers a file (streamed, never cached). The
 * policy test checks this table against the spec.
 */
export const COMPANY_ROUTES = [
  // Companies
  {
    id: 'company.companies.search',
    method: 'GET',
    path: '/companies',
    family: 'companies',
    cacheTtlMs: series,
  },
  {
    id: 'company.companies.banking',
    method: 'GET',
    path: '/companies/banking',
    family: 'companies',
    cacheTtlMs: series,
  },
  {
    id: 'company.companies.insurance',
    method: 'GET',
    path: '/companies/insurance',
    family: 'companies',
    cacheTtlMs: series,
  },
  {
    id: 'company.companies.non_financial',
    method: 'GET',
    path: '/companies/non-financial',
    family: 'companies',
    cacheTtlMs: series,
  },
  {
    id: 'company.companies.local',
    method: 'GET',
    path: '/companies/local/{standard_id}',
    family: 'companies',
    cacheTtlMs: series,
  },
  {
    id: 'company.companies.match',
    method: 'GET',
    path: '/companies/match',
    family: 'companies',
    cacheTtlMs: series,
  },
  {
    id: 'company.companies.get',
    method: 'GET',
    path: '/companies/{id}',
    family: 'companies',
    cacheTtlMs: series,
  },
  {
    id: 'company.companies.external_download',
    method: 'GET',
    path: '/companies/{id}/external_download/{class_code}',
    family: 'downloads',
    file: true,
  },
  {
    id: 'company.companies.statements',
    method: 'GET',
    path: '/companies/{id}/statements',
    family: 'statements',
    cacheTtlMs: series,
  },
  {
    id: 'company.companies.statements.standard',
    method: 'GET',
    path: '/companies/{id}/statements/{standard_id}',
    family: 'statements',
    cacheTtlMs: series,
  },
  {
    id: 'company.companies.benchmark',
    method: 'GET',
    path: '/companies/{id}/benchmark',
    family: 'companies',
    cacheTtlMs: series,
  },
  {
    id: 'company.statements.get',
    method: 'GET',
    path: '/companies/statements/{id}',
    family: 'statements',
    cacheTtlMs: series,
  },
  {
    id: 'company.statements.accounts',
    method: 'GET',
    path: '/companies/statements/{id}/accounts',
    family: 'statements',
    cacheTtlMs: series,
  },
  {
    id: 'company.statements.accounts.standard',
    method: 'GET',
    path: '/companies/statements/{id}/accounts/{standard_id}',
    family: 'statements',
    cacheTtlMs: series,
  },

  // Dictionary
  {
    id: 'company.dictionary.cities',
    method: 'GET',
    path: '/dictionary/cities',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'company.dictionary.company_types',
    method: 'GET',
    path: '/dictionary/company_types',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'company.dictionary.countries',
    method: 'GET',
    path: '/dictionary/countries',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'company.dictionary.currencies',
    method: 'GET',
    path: '/dictionary/currencies',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'company.dictionary.industry_classes',
    method: 'GET',
    path: '/dictionary/industries/classes',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'company.dictionary.industry_class',
    method: 'GET',
    path: '/dictionary/industries/classes/{class_code}',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'company.dictionary.legal_forms',
    method: 'GET',
    path: '/dictionary/legal_forms',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'company.dictionary.market_segments',
    method: 'GET',
    path: '/dictionary/market_segments',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'company.dictionary.operational_statuses',
    method: 'GET',
    path: '/dictionary/operational_statuses',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'company.dictionary.owner_types',
    method: 'GET',
    path: '/dictionary/owner_types',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'company.dictionary.periods',
    method: 'GET',
    path: '/dictionary/periods',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'company.dictionary.regions',
    method: 'GET',
    path: '/dictionary/regions',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'company.dictionary.standards',
    method: 'GET',
    path: '/dictionary/standards',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'company.dictionary.standard',
    method: 'GET',
    path: '/dictionary/standards/{id}',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'company.dictionary.standard.accounts',
    method: 'GET',
    path: '/dictionary/standards/{id}/accounts',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'company.dictionary.standard.account',
    method: 'GET',
    path: '/dictionary/standards/{id}/accounts/{account_id}',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },
  {
    id: 'company.dictionary.stock_exchanges',
    method: 'GET',
    path: '/dictionary/stock_exchanges',
    family: 'dictionary',
    cacheTtlMs: dictionary,
  },

  // Dumps
  {
    id: 'company.dumps.list',
    method: 'GET',
    path: '/companies/dumps',
    family: 'dumps',
    cacheTtlMs: userList,
  },
  {
    id: 'company.dumps.get',
    method: 'GET',
    path: '/companies/dumps/{id}',
    family: 'dumps',
    cacheTtlMs: userList,
  },
  { id: 'company.dumps.create', method: 'POST', path: '/companies/dumps', family: 'dumps' },
  { id: 'company.dumps.delete', method: 'DELETE', path: '/companies/dumps/{id}', family: 'dumps' },

  // Feeds
  {
    id: 'company.feeds.list',
    method: 'GET',
    path: '/companies/feeds',
    family: 'feeds',
    cacheTtlMs: userList,
  },
  {
    id: 'company.feeds.get',
    method: 'GET',
    path: '/companies/feeds/{id}',
    family: 'feeds',
    cacheTtlMs: userList,
  },
  { id: 'company.feeds.create', method: 'POST', path: '/companies/feeds', family: 'feeds' },
  { id: 'company.feeds.update', method: 'PATCH', path: '/companies/feeds/{id}', family: 'feeds' },
  { id: 'company.feeds.delete', method: 'DELETE', path: '/companies/feeds/{id}', family: 'feeds' },

  // Saved search filters
  {
    id: 'company.filters.list',
    method: 'GET',
    path: '/companies/search/filters',
    family: 'filters',
    cacheTtlMs: userList,
  },
  {
    id: 'company.filters.get',
    method: 'GET',
    path: '/companies/search/filters/{id}',
    family: 'filters',
    cacheTtlMs: userList,
  },
  { id: 'company.filters.create', method: 'POST', path: '/companies/search/filters', family: 'filters' },
  {
    id: 'company.filters.update',
    method: 'PATCH',
    path: '/companies/search/filters/{id}',
    family: 'filters',
  },
  {
    id: 'company.filters.delete',
    method: 'DELETE',
    path: '/companies/search/filters/{id}',
    family: 'filters',
  },
] as const satisfies readonly RouteDefinition[];
