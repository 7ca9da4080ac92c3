import type { Registry } from 'prom-client';
import { METRICS_REGISTRY } from '../../src/core/ports/metrics.port.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { type GatewayHandle, http, withGateway } from '../helpers/gateway.js';
import { describeRedis } from '../helpers/redis.js';
import { TcpRelay } from '../helpers/tcp-relay.js';

const TOKEN = 'sbx_macro_redis_down_token_5e11';

async function counter(gw: GatewayHandle, component: string): Promise<number> {
  const m = gw.app.get<Registry>(METRICS_REGISTRY).getSingleMetric('atrium_redis_errors_total');
  const data = await m!.get();
  return data.values.find((v) => v.labels.component === component)?.value ?? 0;
}

describeRedis('Redis goes down under a running gateway', ({ prefix, url }) => {
  const app = testConsumer({
    id: 'app',
    upstreams: new Set(['macro']),
    limits: [{ name: 'window', ttlMs: 30_000, limit: 3 }],
  });
  const bulk = testConsumer({ id: 'bulk', upstreams: new Set(['macro']) });
  const fake = new FakeMacroUpstream({ token: TOKEN });
  const target = new URL(url);
  const proxy = new TcpRelay(target.hostname, Number(target.port || 6379));
  // The gateway reaches Redis through a TCP proxy the tests cut: it listens before the gateway starts.
  beforeAll(() => proxy.start());
  afterAll(() => proxy.cut());
  const gwt = withGateway({
    upstreams: { macro: { fake, token: TOKEN } },
    env: () => ({
      UPSTREAM_MACRO_RATE_PER_SEC: '20',
      UPSTREAM_MACRO_BURST: '20',
      UPSTREAM_MACRO_LOCAL_SHARE: '0.25',
      UPSTREAM_MACRO_MAX_WAIT_MS: '1000',
      UPSTREAM_MACRO_RETRY_ATTEMPTS: '1',
      REDIS_URL: proxy.url,
      ATRIUM_REDIS_PREFIX: prefix,
    }),
    consumers: [app, bulk],
    // The tests run in order; the second counts the calls the fake saw since it reset it.
    resetFakes: false,
    // Two replicas: each sees the other through the heartbeat, so each spends half the budget alone.
    instances: 2,
  });
  let gw: GatewayHandle;
  let n = 500_000;
  const fresh = () => `/macro/series/${n++}`;
  const as = (key: string) => gwt.request(fresh(), key);
  const ready = async () => (await http(gw.url + '/health/ready')).json();
  const budgetMode = async () =>
    (await ready()).upstreams.find((u: { name: string }) => u.name === 'macro').budget;

  const macroFacts = async () => (await ready()).upstreams.find((u: { name: string }) => u.name === 'macro');

  beforeAll(async () => {
    gw = gwt.gateways[0];
    await eventually(async () => (await budgetMode()) === 'shared', { what: 'the shared budget' });
    // The heartbeat has seen both replicas: LOCAL_SHARE (0.25) applies only before any beat answered.
    await eventually(async () => (await macroFacts()).fallbackShare === 0.5, { what: 'two replicas seen' });
  });

  it('consumer quota: shared while Redis answers; fails open (requests pass) and is counted when it does not', async () => {
    const first = await Promise.all([1, 2, 3].map(() => as(app.key)));
    expect(first.map((r) => (r.status === 200 ? 200 : r.text))).toEqual([200, 200, 200]);
    expect((await as(app.key)).status).toBe(429);
    const before = await counter(gw, 'throttler');
    await proxy.cut();
    // Until the gateway has noticed: its Redis check fails.
    await eventually(async () => (await ready()).checks.redis?.ok === false, { what: 'Redis seen down' });
    const during = await Promise.all([1, 2, 3, 4, 5].map(() => as(app.key)));
    expect(during.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    // Nothing is known without the store but the policy itself.
    expect(during[0].headers['ratelimit-policy']).toBe('3;w=30');
    expect(during[0].headers['ratelimit-remaining']).toBeUndefined();
    expect(await counter(gw, 'throttler')).toBe(before + 5);
  });

  it('upstream budget: a local bucket with this replica’s share, never unlimited; shared again when Redis is back', async () => {
    expect(await budgetMode()).toBe('local-fallback');
    fake.reset();
    const before = await counter(gw, 'limits');
    const started = Date.now();
    const statuses: number[] = [];
    expect((await macroFacts()).fallbackShare).toBe(0.5);
    // Drive hard for 2 s with a budget of 20/s, burst 20: half of it is 10/s (the fallback burst is 5).
    await Promise.all(
      // More callers than 1 s of that rate: some wait past UPSTREAM_MACRO_MAX_WAIT_MS and get 429.
      Array.from({ length: 16 }, async () => {
        while (Date.now() - started < 2000) statuses.push((await as(bulk.key)).status);
      }),
    );
    const calls = fake.requests.length;
    // A bucket of 10/s and burst 5 over the time the calls actually spanned (a loaded machine stretches it).
    const spanSeconds = (fake.requests[calls - 1].at - started) / 1000;
    expect(calls).toBeGreaterThanOrEqual(5);
    expect(calls).toBeLessThanOrEqual(5 + Math.ceil(10 * spanSeconds) + 1);
    expect(calls).toBeLessThan(20 + 20 * spanSeconds); // far below the whole budget
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThan(0);
    expect(await counter(gw, 'limits')).toBeGreaterThan(before);

    await proxy.restore();
    await eventually(async () => (await budgetMode()) === 'shared', { what: 'the shared budget again' });
    expect(await budgetMode()).toBe('shared');
    // Shared again: the consumer quota counts in Redis (the window from before the outage is still full).
    expect((await as(app.key)).status).toBe(429);
  });
});
