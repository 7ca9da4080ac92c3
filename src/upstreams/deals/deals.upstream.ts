import { emisUpstream } from '../shared/emis-definition.js';
import { DEALS_ROUTES } from './deals.routes.js';

/** The deal interface (EMIS DealWatch) under `/deals` and its client's own `/dw`. */
export const dealsUpstream = emisUpstream({
  name: 'deals',
  title: 'the deal service',
  // `/dw` is the EMIS client's own name for this API (DealWatch; its paths start with `dw/`).
  prefixes: ['deals', 'dw'],
  routes: DEALS_ROUTES,
  sandbox: {
    fake: () =>
      import('../../sandbox/deals/fake-deals.upstream.js').then(
        (m) => (s, o) => new m.FakeDealsUpstream({ ...s, ...o }),
      ),
  },
});
