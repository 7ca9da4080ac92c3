import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, type HttpResult, type SpawnedGateway, withGateway } from '../helpers/gateway.js';
import { eventually } from '../helpers/eventually.js';
import { describeRedis } from '../helpers/redis.js';

// Three real gateway processes (node dist/main.js) sharing one Redis under a unique prefix, in front of one
// fake upstream that runs here and counts every call. The tests run in order on the same fleet.

const TOKEN = 'sbx_macro_fleet_token_7d03aa';
const RATE = 20;
const BURST = 10;
/** Think time of a simulated client between its requests: the shape of the load, not a synchronisation. */
const thinkTime = (ms: number) => new Promise((r) => setTimeout(r, ms));

describeRedis('a fleet of 3 gateways sharing Redis', ({ prefix, url }) => {
  const quota = testConsumer({
    id: 'quota-app',
    upstreams: new Set(['macro']),
    limits: [{ name: 'per-20s', ttlMs: 20_000, limit: 30 }],
  });
  const hammer = testConsumer({ id: 'hammer', upstreams: new Set(['macro']) });
  const fake = new FakeMacroUpstream({ token: TOKEN });
  const gateways = withGateway({
    mode: 'process',
    instances: 3,
    upstreams: { macro: { fake, token: TOKEN } },
    env: {
      LOG_LEVEL: 'info',
      REDIS_URL: url,
      ATRIUM_REDIS_PREFIX: prefix,
      UPSTREAM_MACRO_RATE_PER_SEC: String(RATE),
      UPSTREAM_MACRO_BURST: String(BURST),
      UPSTREAM_MACRO_MAX_WAIT_MS: '3000',
      UPSTREAM_MACRO_TIMEOUT_MS: '4000',
    },
    consumers: [quota, hammer],
    spawnTimeoutMs: 60_000,
    hookTimeoutMs: 180_000,
    // The tests run in order on the same fleet and fake; each resets the fake itself when it starts.
    resetFakes: false,
  });
  let fleet: SpawnedGateway[] = [];
  let n = 1_000_000;
  const fresh = () => `/macro/series/${n++}`;
  const call = (i: number, key: string, path = fresh()) =>
    http(fleet[i % fleet.length].url + path, { headers: { authorization: `Bearer ${key}` } });
  /** The macro upstream's limiter facts as one replica's readiness reports them. */
  const macroFacts = async (g: SpawnedGateway) => {
    const ready = (await http(g.url + '/health/ready')).json();
    return {
      redisOk: ready.checks.redis?.ok === true,
      ...ready.upstreams.find((u: { name: string }) => u.name === 'macro'),
    };
  };
  /** Until every replica reports a full bucket (tokens are the shared bucket's, as each replica last saw them). */
  const bucketFull = () =>
    eventually(
      async () => (await Promise.all(fleet.map(macroFacts))).every((m) => m.bucket.tokens >= BURST),
      {
        what: 'a full bucket on every replica',
      },
    );

  beforeAll(async () => {
    fleet = gateways.processes;
    // Start once every replica has its Redis connection up (on a loaded machine the first one may retry).
    await eventually(
      async () => (await Promise.all(fleet.map(macroFacts))).every((m) => m.redisOk && m.budget === 'shared'),
      { timeoutMs: 30_000, what: 'every replica on the shared budget' },
    );
  }, 60_000);

  it('inbound: one consumer quota for the whole fleet, with the RateLimit headers', async () => {
    const answers: HttpResult[] = [];
    await Promise.all(
      Array.from({ length: 6 }, async (_, worker) => {
        for (let i = worker; i < 90; i += 6) answers.push(await call(i, quota.key));
      }),
    );
    const ok = answers.filter((a) => a.status === 200);
    const refused = answers.filter((a) => a.status === 429);
    // Counted in Redis: exactly the limit, one count (every allowed answer saw a different remaining value).
    const counted = ok.filter((a) => a.headers['ratelimit-remaining'] !== undefined);
    expect(counted).toHaveLength(30);
    expect(new Set(counted.map((a) => a.headers['ratelimit-remaining'])).size).toBe(30);
    for (const a of counted) {
      expect(a.headers['ratelimit-limit']).toBe('30');
      expect(Number(a.headers['ratelimit-reset'])).toBeLessThanOrEqual(20);
    }
    // The tolerance: a Redis call that timed out on a starved machine fails open (no Remaining header).
    expect(ok.length - counted.length).toBeLessThanOrEqual(3);
    expect(refused.length).toBe(90 - ok.length);
    for (const a of refused) {
      expect(a.json().error.code).toBe('CONSUMER_RATE_LIMITED');
      const retryAfter = Number(a.headers['retry-after']);
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(20);
      expect(a.headers['ratelimit-remaining']).toBe('0');
    }
    expect(fake.requests).toHaveLength(ok.length);
  });

  it(`budget: driven hard for 10 s, the fake gets at most R×10 + burst calls and at least 90 % of that`, async () => {
    await bucketFull();
    fake.reset();
    const t0 = Date.now();
    const end = t0 + 10_000;
    const statuses = new Map<number, number>();
    await Promise.all(
      Array.from({ length: 24 }, async (_, i) => {
        while (Date.now() < end) {
          const r = await call(i, hammer.key);
          statuses.set(r.status, (statuses.get(r.status) ?? 0) + 1);
        }
      }),
    );
    const inWindow = fake.requests.filter((r) => r.at >= t0 && r.at <= end).length;
    const bound = RATE * 10 + BURST;
    expect(inWindow).toBeLessThanOrEqual(bound + 1);
    expect(inWindow).toBeGreaterThanOrEqual(Math.floor(0.9 * bound));
    expect(statuses.get(200)).toBeGreaterThanOrEqual(Math.floor(0.9 * bound));
    const ready = (await http(fleet[0].url + '/health/ready')).json();
    const macro = ready.upstreams.find((u: { name: string }) => u.name === 'macro');
    expect(macro).toMatchObject({
      budget: 'shared',
      breaker: 'closed',
      bucket: { configuredRatePerSec: RATE, learnedRatePerSec: RATE, burst: BURST },
    });
  }, 30_000);

  it('the 429 storm: 200 clients, no upstream calls during Retry-After beyond a burst already on the wire, a correct Retry-After for all, gradual return', async () => {
    await bucketFull();
    fake.reset();
    const K = 25;
    fake.behave({ rateLimit: { afterCalls: K, retryAfterSeconds: 5 } });
    interface Seen {
      client: number;
      sent: number;
      received: number;
      status: number;
      retryAfter: number;
      code?: string;
      cache?: string;
    }
    const seen: Seen[] = [];
    let stop = false;
    const client = async (id: number) => {
      while (!stop) {
        const sent = Date.now();
        const r = await call(id, hammer.key);
        seen.push({
          client: id,
          sent,
          received: Date.now(),
          status: r.status,
          retryAfter: Number(r.headers['retry-after']),
          code: r.status === 200 ? undefined : r.json().error?.code,
          cache: r.headers['x-cache'],
        });
        await thinkTime(500);
      }
    };
    const clients = Array.from({ length: 200 }, (_, id) => client(id));
    // Until the vendor says 429 …
    await eventually(() => fake.requests.length > K, { what: 'the fake to refuse a call' });
    const t429 = fake.requests[K].at; // the first call the fake refused
    const blockedUntil = t429 + 5000;
    // … then through the 5 s and the 2 s observed after them: until the fake has seen a call after that.
    await eventually(() => fake.requests.some((r) => r.at >= blockedUntil + 2000), {
      what: 'calls after the observed window',
    });
    stop = true;
    await Promise.all(clients);

    // No flow of calls reached the vendor while it was refusing. Calls granted before the first refusal was
    // seen cannot be recalled and may land after it, however late a loaded machine sends them; but the
    // shared bucket never grants more than a burst ahead, so that is all the fleet can have on the wire.
    // Without the cooldown, RATE calls a second would arrive for 5 s.
    const during = fake.requests.filter((r) => r.at > t429 && r.at < blockedUntil);
    const diagnostics = {
      during: during.map((r) => r.at - t429),
      logs: fleet.flatMap((g) =>
        g
          .output()
          .split('\n')
          .filter((l) => /WARN|ERROR/.test(l)),
      ),
    };
    if (during.length > 0) console.log(JSON.stringify(diagnostics, null, 1));
    expect(during.length).toBeLessThanOrEqual(BURST);

    // Every client heard 429 with a Retry-After that neither sends it back too early nor much too late
    // (or, once a cache stage exists, a stale 200).
    const inCooldown = seen.filter((s) => s.sent >= t429 + 100 && s.received <= blockedUntil - 100);
    expect(new Set(inCooldown.map((s) => s.client)).size).toBe(200);
    for (const s of inCooldown) {
      if (s.status === 200) {
        expect(s.cache).toBe('STALE');
        continue;
      }
      expect(s.status).toBe(429);
      expect(s.code).toBe('UPSTREAM_RATE_LIMITED');
      expect(s.retryAfter).toBeGreaterThanOrEqual(1);
      expect(s.retryAfter).toBeLessThanOrEqual(5);
      expect(s.received + s.retryAfter * 1000).toBeGreaterThanOrEqual(blockedUntil);
      // At most the second of rounding late, plus however late the gateway heard the 429 (a loaded machine).
      expect(s.sent + s.retryAfter * 1000).toBeLessThanOrEqual(blockedUntil + 1000 + 1000);
    }

    // Afterwards calls resume, at no more than the bucket's rate: no dump of the burst, no thundering herd.
    const after = fake.requests.filter((r) => r.at >= blockedUntil && r.at < blockedUntil + 2000);
    expect(after.length).toBeGreaterThanOrEqual(3);
    expect(after.length).toBeLessThanOrEqual(RATE * 2);
    const firstSecond = after.filter((r) => r.at < blockedUntil + 1000).length;
    expect(firstSecond).toBeLessThanOrEqual(RATE);
    // The learned rate was halved by the 429 and every replica knows it.
    for (const g of fleet) {
      const macro = (await http(g.url + '/health/ready'))
        .json()
        .upstreams.find((u: { name: string }) => u.name === 'macro');
      expect(macro.bucket.learnedRatePerSec).toBeLessThan(RATE);
    }
  }, 60_000);
});
