import { GatewayMetrics, NO_UPSTREAM, type ObservedRequest } from '../../../src/metrics/gateway-metrics.js';
import { FakeMacroUpstream } from '../../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../../helpers/consumers.js';
import { http, rawGet, startGateway, type GatewayHandle, type HttpResult } from '../../helpers/gateway.js';

const MACRO_TOKEN = 'sbx_macro_d5_secret_61a2fe';
const ADMIN_TOKEN = 'sbx_admin_d5_token_9d04c7';

describe('batch items cannot escape through dot segments', () => {
  const caller = testConsumer({ id: 'caller' });
  let macro: FakeMacroUpstream;
  let gw: GatewayHandle;
  let observed: ObservedRequest[];

  beforeAll(async () => {
    macro = new FakeMacroUpstream({ token: MACRO_TOKEN });
    await macro.start();
    gw = await startGateway({
      env: {
        UPSTREAM_MACRO_BASE_URL: macro.url,
        UPSTREAM_MACRO_TOKEN: MACRO_TOKEN,
        ATRIUM_ADMIN_TOKEN: ADMIN_TOKEN,
        ATRIUM_CACHE_MAX_BYTES: '0',
        ATRIUM_BATCH_MAX_ITEMS: '50',
      },
      consumers: [caller.consumer],
    });
    // Every request the gateway routes, the batch's injected items included, is observed here once with
    // its route (a proxy route id, or the pattern of a gateway endpoint such as `/health/ready`).
    const metrics = gw.app.get(GatewayMetrics);
    const observe = metrics.observeRequest.bind(metrics);
    jest.spyOn(metrics, 'observeRequest').mockImplementation((r) => {
      observed.push(r);
      observe(r);
    });
  });
  afterAll(async () => {
    await gw?.close();
    await macro?.close();
  });
  beforeEach(() => {
    macro.reset();
    observed = [];
  });

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary item bodies
  type Item = Record<string, any>;
  const batch = (paths: readonly string[]): Promise<HttpResult> =>
    http(gw.url + '/batch', {
      method: 'POST',
      headers: { authorization: `Bearer ${caller.key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ requests: paths.map((path) => ({ path })) }),
    });
  const items = (res: HttpResult): Item[] => res.json().items as Item[];
  /** The gateway endpoints (not proxy routes) that answered anything since the test began. */
  const gatewayRoutes = () => observed.filter((o) => o.upstream === NO_UPSTREAM).map((o) => o.route);

  // Each resolves (WHATWG URL resolution, then the router's decoding) outside the interface it names.
  const ESCAPES = [
    '/macro/../health/ready',
    '/deals/..\\..\\health\\ready',
    '/macro/%2e%2e/docs/json',
    '/news/../console',
    '/macro/../metrics',
    '/macro/../admin/cache',
    '/news/../console/api/state',
    '/macro/%2E%2e/%2e%2E/metrics',
    '/macro/.%2e/health/live',
    '/macro/%2e./health/live',
    '/company/feeds/../../metrics',
    '/macro/feeds/..',
    '/macro/./feeds',
    '/macro/feeds/%2e',
    '/macro\\..\\metrics',
    '/macro/\\/metrics',
    '/macro/..%2fmetrics',
    '/macro/..%2Fmetrics',
    '/macro/%5c..%5cmetrics',
    '/macro/%00/../metrics',
    '/macro/feeds#/../../metrics',
    '/macro/feeds?x=1#/../../metrics',
    '/macro/%c0%ae%c0%ae/metrics',
    '/macro/%zz/../metrics',
  ];

  it.each(ESCAPES)('%s is refused with a 400 for that item, before anything runs', async (path) => {
    const res = await batch([path]);
    expect(res.status).toBe(200);
    const [item] = items(res);
    expect(item).toMatchObject({ completed: true, status: 400 });
    expect(item.body.error).toMatchObject({ code: 'VALIDATION_FAILED', parameter: 'requests[0].path' });
    expect(item.headers['x-request-id']).toMatch(/:0$/);
    expect(gatewayRoutes()).toEqual(['/batch']);
    expect(macro.requests).toHaveLength(0);
  });

  it.each([
    // The gateway's own endpoints and the interfaces' non-proxy routes (the EMIS client's Auth/… calls).
    '/metrics',
    '/health/ready',
    '/console/api/state',
    '/admin/cache',
    '/docs/json',
    '/batch',
    '/news/Auth/login/?username=caller&password=x',
    '/documents/Auth/getUserData/',
    '/macro/login',
    // Decoded once, `%252e%252e` is the literal segment `%2e%2e`: no route has it.
    '/macro/%252e%252e/metrics',
    '/MACRO/feeds',
    '/macro',
  ])('%s is no interface operation: refused with a 404, nothing injected', async (path) => {
    const res = await batch([path]);
    const [item] = items(res);
    expect(item).toMatchObject({ completed: true, status: 404 });
    expect(item.body.error.code).toBe('NOT_FOUND');
    expect(gatewayRoutes()).toEqual(['/batch']);
    expect(macro.requests).toHaveLength(0);
  });

  it('one batch of every escape beside valid items: only the valid items run, as the routes they name', async () => {
    const valid = [
      '/macro/feeds?limit=1',
      '/macro//feeds/?limit=2',
      '/macro/%66eeds?limit=3',
      '/macro/layout/databases',
    ];
    const res = await batch([...ESCAPES, ...valid]);
    expect(res.status).toBe(200);
    const all = items(res);
    for (const item of all.slice(0, ESCAPES.length)) expect(item.status).toBe(400);
    expect(all.slice(ESCAPES.length).map((i) => [i.status, i.route])).toEqual([
      [200, 'macro.feeds.list'],
      [200, 'macro.feeds.list'],
      [200, 'macro.feeds.list'],
      [200, 'macro.layout.databases'],
    ]);
    // The upstream saw the four valid items only, each at the canonical path of its route.
    expect(macro.requests.map((r) => r.path).sort()).toEqual(
      ['/v2/feeds', '/v2/feeds', '/v2/feeds', '/v2/layout/databases'].sort(),
    );
    expect(macro.requests.map((r) => r.query.find(([k]) => k === 'limit')?.[1]).sort()).toEqual(
      ['1', '2', '3', undefined].sort(),
    );
    // No refused item reached any gateway endpoint: the only one observed is the batch call itself.
    expect(gatewayRoutes()).toEqual(['/batch']);
    expect(
      observed
        .filter((o) => o.upstream !== NO_UPSTREAM)
        .map((o) => o.route)
        .sort(),
    ).toEqual(['macro.feeds.list', 'macro.feeds.list', 'macro.feeds.list', 'macro.layout.databases'].sort());
  });

  it('a direct call of the same escapes is refused too (the path check before routing)', async () => {
    for (const path of ['/macro/../metrics', '/macro/%2e%2e/docs/json']) {
      const res = await rawGet(gw.url, path, { authorization: `Bearer ${caller.key}` });
      expect(res.status).toBe(400);
    }
    expect(gatewayRoutes().filter((r) => r === '/metrics' || r === '/docs/json')).toEqual([]);
  });
});
