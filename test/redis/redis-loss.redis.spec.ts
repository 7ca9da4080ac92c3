import { UpstreamLimitsService } from '../../src/proxy/upstream-limits.service.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { burst } from '../helpers/burst.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { type GatewayHandle, http, withGateway } from '../helpers/gateway.js';
import { describeRedis } from '../helpers/redis.js';
import { TcpRelay } from '../helpers/tcp-relay.js';

const TOKEN = 'sbx_macro_redis_loss_token_31aa';
/** The policy's bound on the way back: shared mode again within 5 s of Redis answering. */
const BACK_WITHIN_MS = 5_000;

/**
 * The "Losing Redis" table of docs/operations.md, function by function: two replicas reach Redis through a
 * TCP relay this suite cuts (the budget's share and the consumer quota are in test/limits/redis-down.redis.spec.ts).
 */
describeRedis('losing Redis: the declared policy, function by function', ({ prefix, url }) => {
  const app = testConsumer({ id: 'app', upstreams: new Set(['macro']) });
  const fake = new FakeMacroUpstream({ token: TOKEN });
  const target = new URL(url);
  const relay = new TcpRelay(target.hostname, Number(target.port || 6379));
  beforeAll(() => relay.start());
  afterAll(() => relay.cut());
  const fleet = withGateway({
    upstreams: { macro: { fake, token: TOKEN } },
    env: () => ({
      REDIS_URL: relay.url,
      ATRIUM_REDIS_PREFIX: prefix,
      ATRIUM_CACHE_REDIS_TIMEOUT_MS: '250',
      ATRIUM_CACHE_STALE_WHILE_REVALIDATE_MS: '0',
      ATRIUM_CACHE_STALE_IF_ERROR_MS: '0',
      UPSTREAM_MACRO_RATE_PER_SEC: '50',
      UPSTREAM_MACRO_BURST: '50',
      UPSTREAM_MACRO_RETRY_ATTEMPTS: '1',
    }),
    consumers: [app],
    instances: 2,
  });
  let a: GatewayHandle;
  let b: GatewayHandle;
  const auth = { authorization: `Bearer ${app.key}` };
  const get = (gw: GatewayHandle, path: string) => http(gw.url + path, { headers: auth });
  const ready = async (gw: GatewayHandle) => (await http(gw.url + '/health/ready')).json();
  const macro = async (gw: GatewayHandle) =>
    (await ready(gw)).upstreams.find((u: { name: string }) => u.name === 'macro');
  const cacheUp = async (gw: GatewayHandle) => {
    const r = await http(gw.url + '/health/ready');
    return !/"available":false/.test(r.text);
  };

  beforeAll(async () => {
    [a, b] = fleet.gateways;
    for (const gw of [a, b])
      await eventually(async () => (await macro(gw)).budget === 'shared', { what: 'a shared budget' });
  });
  afterEach(() => relay.restore().catch(() => undefined));

  /** Cuts Redis until `during` is done, restores it, and answers how long the fleet took to share again. */
  async function withoutRedis(during: () => Promise<void>, shared: () => Promise<boolean>): Promise<number> {
    await relay.cut();
    await during();
    await relay.restore();
    const back = Date.now();
    await eventually(shared, { timeoutMs: 15_000, intervalMs: 50, what: 'shared mode again' });
    return Date.now() - back;
  }

  it('cache and coalescing: the in-process LRU and in-process coalescing stand in; shared again within 5 s', async () => {
    const path = '/macro/layout/tables/TB1207';
    const first = await get(a, path);
    expect([first.status, first.text.slice(0, 200)]).toEqual([200, expect.any(String)]);
    expect(first.headers['x-cache']).toBe('MISS');
    expect((await get(b, path)).headers['x-cache']).toBe('HIT');
    fake.reset();
    const backMs = await withoutRedis(
      async () => {
        // Each replica notices, then answers from its own LRU: one vendor call per replica at most.
        for (const gw of [a, b]) {
          const seen: string[] = [];
          for (let i = 0; i < 4; i++) {
            const r = await get(gw, path);
            expect(r.status).toBe(200);
            seen.push(String(r.headers['x-cache']));
          }
          expect(seen.at(-1)).toBe('HIT');
        }
        expect(fake.calls('/layout/tables')).toBeLessThanOrEqual(2);
        // Identical misses coalesce in each process: one vendor call per replica, not one per request.
        fake.behave({ latencyMs: 300 });
        const results = await burst([a.url, b.url], '/macro/dictionary/countries', 20, auth);
        expect(results.every((r) => r.status === 200)).toBe(true);
        expect(fake.calls('/dictionary/countries')).toBeLessThanOrEqual(2);
        fake.behave({});
      },
      async () => (await cacheUp(a)) && (await cacheUp(b)),
    );
    expect(backMs).toBeLessThanOrEqual(BACK_WITHIN_MS);
    // Shared again: an entry stored by one replica is a hit on the other.
    const fresh = '/macro/dictionary/units';
    expect((await get(a, fresh)).headers['x-cache']).toBe('MISS');
    expect((await get(b, fresh)).headers['x-cache']).toBe('HIT');
  });

  it('a vendor cooldown starts locally while Redis is away and becomes the fleet’s on reconnect', async () => {
    let n = 4_000_000;
    fake.reset();
    const backMs = await withoutRedis(
      async () => {
        await eventually(async () => (await macro(a)).budget === 'local-fallback', {
          what: 'A on its local share',
        });
        fake.behave({ rateLimit: { afterCalls: 0, retryAfterSeconds: 20 } });
        const first = await get(a, `/macro/series/${n++}`);
        expect(first.status).toBe(429);
        fake.behave({});
        expect((await macro(a)).cooldownRemainingSeconds).toBeGreaterThan(10);
        // B cannot hear of it while Redis is away.
        expect((await macro(b)).cooldownRemainingSeconds).toBe(0);
      },
      async () => (await macro(b)).cooldownRemainingSeconds > 10,
    );
    expect(backMs).toBeLessThanOrEqual(BACK_WITHIN_MS);
    const calls = fake.requests.length;
    expect((await get(b, `/macro/series/${n++}`)).status).toBe(429);
    expect(fake.requests.length).toBe(calls);
    await a.app.get(UpstreamLimitsService).limiter('macro')!.liftCooldown();
    await eventually(async () => (await macro(b)).cooldownRemainingSeconds === 0, { what: 'the lift on B' });
  });

  it('the fleet budget: each replica spends its heartbeat share while Redis is away; shared again within 5 s', async () => {
    // The count is of the replicas Redis heard from within the heartbeat window: wait for it to settle on
    // these two (a mark that lapses is dropped within the window).
    for (const gw of [a, b])
      await eventually(async () => (await macro(gw)).fallbackShare === 0.5, {
        timeoutMs: 10_000,
        what: 'a half share on each replica',
      });
    const backMs = await withoutRedis(
      async () => {
        for (const gw of [a, b])
          await eventually(
            async () => {
              await get(gw, `/macro/series/${Math.floor(Math.random() * 1e9)}`);
              return (await macro(gw)).budget === 'local-fallback';
            },
            { what: 'the local share' },
          );
      },
      async () => (await macro(a)).budget === 'shared' && (await macro(b)).budget === 'shared',
    );
    expect(backMs).toBeLessThanOrEqual(BACK_WITHIN_MS);
  });
});
