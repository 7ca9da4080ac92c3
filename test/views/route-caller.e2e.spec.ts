import { ProxyService } from '../../src/proxy/proxy.service.js';
import type { RouteDefinition } from '../../src/proxy/pipeline.types.js';
import type { Consumer } from '../../src/core/auth/consumer.js';
import { CONSUMER_STORE } from '../../src/core/auth/consumer-auth.guard.js';
import type { ConsumerStore } from '../../src/core/auth/consumer-store.service.js';
import { parseQuery, rawQueryOf } from '../../src/core/http/query-string.js';
import { RouteCaller, type RouteCallResult } from '../../src/route-calls/route-caller.js';
import { testConsumer } from '../helpers/consumers.js';
import { type HttpResult, withGateway } from '../helpers/gateway.js';

/**
 * The RouteCaller (view parts, batch items: the outer request authenticated the consumer) against a direct
 * HTTP call of the same route on the same gateway: same status, bytes, cache outcome, quota and envelope,
 * and the same vendor calls, metrics and usage counts. What the sandbox macro fake saw is counted.
 */
describe('in-process route calls answer as direct calls do', () => {
  const all = testConsumer({ id: 'direct-all' });
  const noMacro = testConsumer({ id: 'direct-no-macro', upstreams: new Set(['company']) });
  const limited = testConsumer({
    id: 'direct-limited',
    limits: [{ name: 'per-minute', ttlMs: 60_000, limit: 2 }],
  });
  const gw = withGateway({ sandbox: true, consumers: [all, noMacro, limited] });

  let caller: RouteCaller;
  let route: RouteDefinition;
  const macroCalls = () => gw.sandbox.macro.requests.length;
  /** The consumer the outer request's guard would have found for `key`. */
  const consumerOf = (key: string): Consumer => gw.app.get<ConsumerStore>(CONSUMER_STORE).authenticate(key)!;
  /** `url` is `/macro/series/<id>/data[?query]`: the route's one parameter is its third segment. */
  const inner = (key: string, url: string, extra: { accept?: string } = {}) =>
    caller.call(
      { consumer: consumerOf(key) },
      {
        route,
        url,
        params: { id: decodeURIComponent(url.split('?')[0].split('/')[3]) },
        query: parseQuery(rawQueryOf(url)),
        requestId: `inner-${Math.random().toString(36).slice(2)}`,
        ...extra,
      },
    );
  /** The envelope without the per-request ids. */
  const errorOf = (body: Buffer | string) => {
    const e = (JSON.parse(body.toString()) as { error: Record<string, unknown> }).error;
    const { requestId: _r, traceId: _t, ...rest } = e;
    return rest;
  };
  const same = (res: RouteCallResult, direct: HttpResult) => {
    expect(res.status).toBe(direct.status);
    expect(res.headers['content-type']).toBe(direct.headers['content-type']);
    expect(res.headers['retry-after']).toBe(direct.headers['retry-after']);
  };

  beforeAll(() => {
    caller = gw.app.get(RouteCaller);
    route = gw.app
      .get(ProxyService)
      .upstream('macro')!
      .def.routes.find((r) => r.id === 'macro.series.data')!;
    expect(route).toBeDefined();
  });
  beforeEach(() => gw.sandbox.macro.reset());

  it('a direct MISS warms the cache for an inner call: HIT, the same bytes, no second vendor call', async () => {
    const direct = await gw.request('/macro/series/310902301/data', all.key);
    expect(direct.status).toBe(200);
    expect(direct.headers['x-cache']).toBe('MISS');
    const res = await inner(all.key, '/macro/series/310902301/data');
    same(res, direct);
    expect(res.headers['x-cache']).toBe('HIT');
    expect(res.body.toString()).toBe(direct.text);
    expect(macroCalls()).toBe(1);
    // And the other way round: an inner MISS is a direct HIT.
    const first = await inner(all.key, '/macro/series/310902302/data');
    expect(first.headers['x-cache']).toBe('MISS');
    const again = await gw.request('/macro/series/310902302/data', all.key);
    expect(again.headers['x-cache']).toBe('HIT');
    expect(again.text).toBe(first.body.toString());
    expect(macroCalls()).toBe(2);
  });

  it('refusals carry the direct call’s status and envelope, before any vendor call', async () => {
    const cases: Array<[string, string, { accept?: string }]> = [
      // No permission for the interface.
      [noMacro.key, '/macro/series/310902301/data', {}],
      // A format nobody serves.
      [all.key, '/macro/series/310902301/data', { accept: 'image/png' }],
      // A path trick in the id (an encoded slash).
      [all.key, '/macro/series/31%2F0/data', {}],
    ];
    for (const [key, url, extra] of cases) {
      const res = await inner(key, url, extra);
      const direct = await gw.request(url, key, { headers: extra.accept ? { accept: extra.accept } : {} });
      expect([res.status, url]).toEqual([direct.status, url]);
      same(res, direct);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(errorOf(res.body)).toEqual(errorOf(direct.text));
    }
    expect(macroCalls()).toBe(0);
  });

  it('inner and direct calls spend one quota: the third call of two allowed is a 429 with Retry-After', async () => {
    const a = await inner(limited.key, '/macro/series/310902303/data');
    const b = await gw.request('/macro/series/310902303/data', limited.key);
    expect([a.status, b.status]).toEqual([200, 200]);
    expect(a.headers['ratelimit-remaining']).toBe('1');
    const c = await inner(limited.key, '/macro/series/310902303/data');
    expect(c.status).toBe(429);
    expect(Number(c.headers['retry-after'])).toBeGreaterThan(0);
    expect(errorOf(c.body)).toMatchObject({ code: 'CONSUMER_RATE_LIMITED' });
  });

  it('inner calls are counted in the request metrics and the consumer’s usage', async () => {
    const count = async (pattern: RegExp) => {
      const text = (await gw.request('/metrics')).text;
      return text
        .split('\n')
        .filter((l) => pattern.test(l))
        .reduce((n, l) => n + Number(l.split(' ').pop()), 0);
    };
    const hits = /^atrium_requests_total\{.*route="macro\.series\.data".*cache="hit"/;
    const cacheAnswers = /^atrium_consumer_cache_answers_total\{.*consumer="direct-all".*upstream="macro"/;
    await gw.request('/macro/series/310902304/data', all.key);
    const [h0, u0] = [await count(hits), await count(cacheAnswers)];
    for (let i = 0; i < 3; i++)
      expect((await inner(all.key, '/macro/series/310902304/data')).headers['x-cache']).toBe('HIT');
    expect(await count(hits)).toBe(h0 + 3);
    expect(await count(cacheAnswers)).toBe(u0 + 3);
  });
});
