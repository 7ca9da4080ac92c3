import { companyUpstream } from './company/company.upstream.js';
import { dealsUpstream } from './deals/deals.upstream.js';
import { documentsUpstream } from './documents/documents.upstream.js';
import { macroUpstream } from './macro/macro.upstream.js';

/**
 * Every upstream interface Atrium fronts, in the order they are routed, documented and reported. Adding one
 * is its own folder (see upstream-declaration.ts) and one line here.
 */
export const UPSTREAMS = [macroUpstream, companyUpstream, documentsUpstream, dealsUpstream] as const;

export type UpstreamName = (typeof UPSTREAMS)[number]['name'];

export const UPSTREAM_NAMES: readonly UpstreamName[] = UPSTREAMS.map((u) => u.name);
