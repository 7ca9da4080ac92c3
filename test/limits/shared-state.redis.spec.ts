import { UpstreamLimitsService } from '../../src/proxy/upstream-limits.service.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { type GatewayHandle, http, withGateway } from '../helpers/gateway.js';
import { describeRedis } from '../helpers/redis.js';

const TOKEN = 'sbx_macro_shared_state_token_2b7f';

describeRedis(
  'two replicas in one process share cooldown, learned rate and budget through Redis',
  ({ prefix, url }) => {
    const app = testConsumer({ id: 'app', upstreams: new Set(['macro']) });
    const fake = new FakeMacroUpstream({ token: TOKEN });
    const replicas = withGateway({
      upstreams: { macro: { fake, token: TOKEN } },
      env: {
        UPSTREAM_MACRO_RATE_PER_SEC: '40',
        UPSTREAM_MACRO_BURST: '6',
        UPSTREAM_MACRO_MAX_WAIT_MS: '1000',
        UPSTREAM_MACRO_RETRY_ATTEMPTS: '1',
        REDIS_URL: url,
        ATRIUM_REDIS_PREFIX: prefix,
      },
      consumers: [app],
      instances: 2,
      // The tests run in order and reset the fake themselves where they count its calls.
      resetFakes: false,
    });
    let a: GatewayHandle;
    let b: GatewayHandle;
    let n = 2_000_000;
    const get = (gw: GatewayHandle) =>
      http(`${gw.url}/macro/series/${n++}`, { headers: { authorization: `Bearer ${app.key}` } });
    const macro = async (gw: GatewayHandle) =>
      (await http(gw.url + '/health/ready'))
        .json()
        .upstreams.find((u: { name: string }) => u.name === 'macro');

    beforeAll(async () => {
      [a, b] = replicas.gateways;
      for (const gw of [a, b])
        await eventually(async () => (await macro(gw)).budget === 'shared', { what: 'a shared budget' });
    });

    it('one budget for both: driven together for 2 s they get R×2 + burst calls, not twice that', async () => {
      fake.reset();
      const t0 = Date.now();
      const end = t0 + 2000;
      await Promise.all(
        Array.from({ length: 12 }, async (_, i) => {
          while (Date.now() < end) await get(i % 2 ? a : b);
        }),
      );
      const calls = fake.requests.filter((r) => r.at >= t0 && r.at <= end).length;
      // Two separate buckets would allow 2 × (40 × 2 + 6) = 172.
      expect(calls).toBeLessThanOrEqual(40 * 2 + 6 + 1);
      expect(calls).toBeGreaterThanOrEqual(20); // and they did spend it
    });

    it('a 429 seen by one replica cools down the other at once (pub/sub), with the fleet-wide learned rate', async () => {
      // The previous test emptied the shared bucket: start once it holds a token again.
      await eventually(async () => (await macro(a)).bucket.tokens >= 1, { what: 'a token' });
      fake.reset();
      fake.behave({ rateLimit: { afterCalls: 0, retryAfterSeconds: 4 } });
      const first = await get(a);
      expect(first.status).toBe(429);
      expect(first.headers['retry-after']).toBe('4');
      const seenByB = await eventually(
        async () => {
          const facts = await macro(b);
          return facts.cooldownRemainingSeconds > 0 ? facts : undefined;
        },
        { what: 'the cooldown to reach replica b' },
      );
      expect(seenByB.cooldownRemainingSeconds).toBeGreaterThanOrEqual(3);
      expect(seenByB.bucket.learnedRatePerSec).toBe(20);
      const calls = fake.requests.length;
      const fromB = await get(b);
      expect(fromB.status).toBe(429);
      expect(Number(fromB.headers['retry-after'])).toBeGreaterThanOrEqual(3);
      expect(fake.requests.length).toBe(calls);
    });

    it('an operator lifting the cooldown on one replica lifts it for all', async () => {
      fake.reset();
      await a.app.get(UpstreamLimitsService).limiter('macro')!.liftCooldown();
      await eventually(async () => (await macro(b)).cooldownRemainingSeconds === 0, {
        what: 'the lift to reach replica b',
      });
      // The bucket refills gradually from the lift.
      await eventually(async () => (await get(b)).status === 200, { what: 'a 200 after the lift' });
    });
  },
);
