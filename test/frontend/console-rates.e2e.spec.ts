import { randomBytes } from 'node:crypto';
import { FakeDealsUpstream } from '../../src/sandbox/deals/fake-deals.upstream.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { http, withGateway } from '../helpers/gateway.js';

const MACRO_TOKEN = 'sbx_macro_console_rates_8a1f';
const DEALS_TOKEN = 'sbx_deals_console_rates_2c7e';

interface Upstream {
  name: string;
  requestsPerSec: number | null;
  cache: { hit: number; miss: number; stale: number; coalesced: number } | null;
}

// Issue 16: a console showed the same requests/s for macro and deals while their last-minute counts were
// 183 and 61: the rate was the last sample interval's, not the window the counts cover.
describe('console request rates per upstream', () => {
  const operatorKey = `op_${randomBytes(24).toString('base64url')}`;
  const app = testConsumer({ id: 'rates-app', upstreams: new Set(['macro', 'deals']) });
  const gw = withGateway({
    upstreams: {
      macro: { fake: new FakeMacroUpstream({ token: MACRO_TOKEN }), token: MACRO_TOKEN },
      deals: { fake: new FakeDealsUpstream({ token: DEALS_TOKEN }), token: DEALS_TOKEN },
    },
    env: { ATRIUM_OPERATOR_TOKEN: operatorKey },
    consumers: [app],
  });
  const state = async () => {
    const res = await http(gw.url + '/console/api/state', {
      headers: { authorization: `Bearer ${operatorKey}` },
    });
    expect(res.status).toBe(200);
    return res.json() as { windowSeconds: number; upstreams: Upstream[]; generatedAt: string };
  };
  const get = (path: string) => http(gw.url + path, { headers: { authorization: `Bearer ${app.key}` } });

  it('matches the counts of the same window, upstream by upstream', async () => {
    const first = await state();
    const startedAt = Date.parse(first.generatedAt);
    for (let i = 0; i < 30; i++) expect((await get('/macro/layout/tables/TB1207')).status).toBe(200);
    for (let i = 0; i < 10; i++) expect((await get('/deals/SearchDeal/getDeals/?limit=2')).status).toBe(200);
    // Two more samples (at most one a second), the last with no traffic since the one before.
    const mid = await eventually(async () => {
      const s = await state();
      return Date.parse(s.generatedAt) - startedAt >= 1000 ? s : undefined;
    });
    const last = await eventually(async () => {
      const s = await state();
      return Date.parse(s.generatedAt) - Date.parse(mid.generatedAt) >= 1000 ? s : undefined;
    });
    const of = (name: string) => last.upstreams.find((u) => u.name === name)!;
    const macro = of('macro').requestsPerSec!;
    const deals = of('deals').requestsPerSec!;
    // The same window for both: 30 and 10 requests in it, so three times the rate, and neither is zero.
    expect(deals).toBeGreaterThan(0);
    expect(macro / deals).toBeCloseTo(3, 1);
    // And the rate is the window's: about 30 requests over the (whole-second) window the page shows.
    expect(macro * last.windowSeconds).toBeGreaterThan(30 * 0.75);
    expect(macro * last.windowSeconds).toBeLessThan(30 * 1.35);
  });
});
