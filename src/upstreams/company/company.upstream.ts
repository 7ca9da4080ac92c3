import { QueryTokenCredentials } from '../shared/static-token.credentials.js';
import { defineUpstream } from '../upstream-declaration.js';
import { companyErrorMapper } from './company-error.mapper.js';
import { COMPANY_ROUTES } from './company.routes.js';

/** The company data interface v2 (EMIS) under `/company`. */
export const companyUpstream = defineUpstream({
  name: 'company',
  title: 'the company data service',
  prefixes: ['company'],
  routes: COMPANY_ROUTES,
  errorMapper: companyErrorMapper,
  // Only JSON is known of the company interface (upstreams.md §3): XML asked for is a 415, never JSON.
  formats: ['json'],
  config: { credentials: 'token' },
  // The vendor takes its key as the `token` query parameter on every call (upstreams.md §3).
  credentials: (u, { redactor }) => new QueryTokenCredentials('token', u.tokenSecret ?? u.token!, redactor),
  sandbox: {
    fake: () =>
      import('../../sandbox/company/fake-company.upstream.js').then(
        (m) => (s) => new m.FakeCompanyUpstream({ token: s.token }),
      ),
  },
});
