import { CACHE_TTL } from '../../proxy/cache-ttl.js';
import type { RouteDefinition } from '../../proxy/pipeline.types.js';

const { series } = CACHE_TTL;

/**
 * The four operations of the deal interface (spec §4.4), paths with the vendor's casing and trailing slash
 * below `/deals` (and `/dw`). `Auth/*` is answered by the gateway itself (emis-auth.controller.ts).
 */
export const DEALS_ROUTES = [
  {
    id: 'deals.deal.info',
    method: 'GET',
    path: '/DealInfo/getDealInfo/',
    family: 'deals',
    cacheTtlMs: series,
  },
  {
    id: 'deals.advisors.list',
    method: 'GET',
    path: '/SearchAdvisors/getListAdvisors/',
    family: 'advisors',
    cacheTtlMs: series,
  },
  {
    id: 'deals.companies.list',
    method: 'GET',
    path: '/SearchCompanies/getListCompanies/',
    family: 'companies',
    cacheTtlMs: series,
  },
  {
    id: 'deals.deals.search',
    method: 'GET',
    path: '/SearchDeal/getDeals/',
    family: 'deals',
    cacheTtlMs: series,
  },
] as const satisfies readonly RouteDefinition[];
