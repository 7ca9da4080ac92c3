import type { Registry } from 'prom-client';
import { METRICS_REGISTRY } from '../../src/core/ports/metrics.port.js';
import { UpstreamLimitsService } from '../../src/proxy/upstream-limits.service.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { eventually } from '../helpers/eventually.js';
import { type GatewayHandle, http, type HttpResult, withGateway } from '../helpers/gateway.js';

const TOKEN = 'sbx_macro_limits_e2e_token_91c2';

/** The value of one metric sample from the app's own registry (there is no /metrics route yet). */
async function metric(
  gw: Pick<GatewayHandle, 'app'>,
  name: string,
  labels: Record<string, string>,
): Promise<number> {
  const registry = gw.app.get<Registry>(METRICS_REGISTRY);
  const m = registry.getSingleMetric(name);
  if (!m) throw new Error(`metric ${name} is not registered`);
  const data = await m.get();
  const sample = data.values.find((v) => Object.entries(labels).every(([k, val]) => v.labels[k] === val));
  return sample?.value ?? 0;
}

let seriesId = 100_000;
/** A different series every call: never a cache hit or a coalesced call once those stages exist. */
const fresh = () => `/macro/series/${seriesId++}`;

describe('inbound consumer quota (in memory)', () => {
  const limited = testConsumer({
    id: 'limited-app',
    upstreams: new Set(['macro']),
    limits: [
      { name: 'burst', ttlMs: 10_000, limit: 3 },
      { name: 'per-minute', ttlMs: 60_000, limit: 100 },
    ],
  });
  const other = testConsumer({
    id: 'other-app',
    upstreams: new Set(['macro']),
    limits: [{ name: 'burst', ttlMs: 10_000, limit: 3 }],
  });
  const unlimited = testConsumer({ id: 'unlimited-app', upstreams: new Set(['macro']) });
  const fake = new FakeMacroUpstream({ token: TOKEN });
  const gw = withGateway({
    upstreams: { macro: { fake, token: TOKEN } },
    env: { UPSTREAM_MACRO_RATE_PER_SEC: '1000' },
    consumers: [limited, other, unlimited],
    // The tests run in order on one fake and read what it recorded as they go.
    resetFakes: false,
  });

  const as = (key: string, path: string) =>
    http(gw.url + path, { headers: { authorization: `Bearer ${key}` } });

  it('RateLimit-* on every answer, 429 CONSUMER_RATE_LIMITED with Retry-After past the quota, no upstream call', async () => {
    const answers: HttpResult[] = [];
    // A success, an upstream error and a validation error all spend quota and all carry the headers.
    answers.push(await as(limited.key, '/macro/feeds?limit=1'));
    answers.push(await as(limited.key, '/macro/layout/tables/NOPE'));
    answers.push(await as(limited.key, '/macro/feeds?limit=1000'));
    expect(answers.map((a) => a.status)).toEqual([200, 404, 400]);
    expect(answers.map((a) => a.headers['ratelimit-remaining'])).toEqual(['2', '1', '0']);
    for (const a of answers) {
      expect(a.headers['ratelimit-limit']).toBe('3');
      expect(Number(a.headers['ratelimit-reset'])).toBeGreaterThanOrEqual(9);
      expect(Number(a.headers['ratelimit-reset'])).toBeLessThanOrEqual(10);
      expect(a.headers['ratelimit-policy']).toBe('3;w=10, 100;w=60');
    }
    const upstreamCalls = fake.requests.length;
    const refused = await as(limited.key, '/macro/feeds?limit=1');
    expect(refused.status).toBe(429);
    expect(refused.json().error).toMatchObject({
      code: 'CONSUMER_RATE_LIMITED',
      status: 429,
      retryable: true,
    });
    const retryAfter = Number(refused.headers['retry-after']);
    expect(retryAfter).toBeGreaterThanOrEqual(9);
    expect(retryAfter).toBeLessThanOrEqual(10);
    expect(refused.json().error.retryAfterSeconds).toBe(retryAfter);
    expect(refused.headers['ratelimit-remaining']).toBe('0');
    expect(refused.headers['ratelimit-reset']).toBe(String(retryAfter));
    expect(fake.requests.length).toBe(upstreamCalls);
    expect(await metric(gw, 'atrium_rate_limited_total', { upstream: 'macro', kind: 'consumer' })).toBe(1);
    expect(
      await metric(gw, 'atrium_consumer_quota_remaining', { consumer: 'limited-app', window: 'per-minute' }),
    ).toBe(97);
  });

  it('quotas are per consumer; consumers without limits and public routes are not throttled', async () => {
    const res = await as(other.key, '/macro/feeds?limit=1');
    expect(res.status).toBe(200);
    expect(res.headers['ratelimit-remaining']).toBe('2');
    for (let i = 0; i < 5; i++) {
      const free = await as(unlimited.key, '/macro/feeds?limit=1');
      expect(free.status).toBe(200);
      expect(free.headers['ratelimit-limit']).toBeUndefined();
    }
    const live = await http(gw.url + '/health/live');
    expect(live.status).toBe(200);
    expect(live.headers['ratelimit-limit']).toBeUndefined();
    const anonymous = await http(gw.url + '/macro/feeds');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers['ratelimit-limit']).toBeUndefined();
  });
});

/** One fake macro upstream and one gateway in front of it, per describe block. */
function gatewayFor(env: Record<string, string>, consumers: ReturnType<typeof testConsumer>[]) {
  const fake = new FakeMacroUpstream({ token: TOKEN });
  // The fixture fills its fields in beforeAll: add to that object, do not copy it.
  return Object.assign(withGateway({ upstreams: { macro: { fake, token: TOKEN } }, env, consumers }), {
    fake,
  });
}

const reader = testConsumer({ id: 'reader', upstreams: new Set(['macro']) });
const writer = testConsumer({ id: 'writer', upstreams: new Set(['macro']), write: true });
const readiness = async (gw: Pick<GatewayHandle, 'url'>) =>
  (await http(gw.url + '/health/ready')).json().upstreams.find((u: { name: string }) => u.name === 'macro');

describe('writes are never retried; idempotent reads are', () => {
  const ctx = gatewayFor(
    {
      UPSTREAM_MACRO_TIMEOUT_MS: '600',
      UPSTREAM_MACRO_RETRY_BASE_MS: '20',
      UPSTREAM_MACRO_RETRY_MAX_BACKOFF_MS: '100',
    },
    [reader, writer],
  );
  const post = (body: string) =>
    http(ctx.gw.url + '/macro/userdefined/series', {
      method: 'POST',
      headers: { authorization: `Bearer ${writer.key}`, 'content-type': 'application/json' },
      body,
    });

  it('a POST that times out reaches the fake exactly once', async () => {
    ctx.fake.behave({ hang: true });
    const res = await post(JSON.stringify({ name: 'x' }));
    expect(res.status).toBe(504);
    expect(res.json().error.code).toBe('UPSTREAM_TIMEOUT');
    // The retry stage answers only after its last attempt, so a retry would already have been sent; a GET
    // after the answer makes sure whatever was sent before it has been received.
    ctx.fake.behave({ hang: undefined });
    const marker = await http(ctx.gw.url + fresh(), { headers: { authorization: `Bearer ${reader.key}` } });
    expect(marker.status).toBe(200);
    expect(ctx.fake.requests.filter((r) => r.method === 'POST')).toHaveLength(1);
    expect(ctx.fake.requests).toHaveLength(2);
  });

  it('a POST whose connection is reset is not retried either; the same failure on a GET is', async () => {
    ctx.fake.behave({ resetConnections: { times: 1 } });
    expect((await post('{}')).status).toBe(503);
    expect(ctx.fake.requests).toHaveLength(1);
    ctx.fake.reset();
    ctx.fake.behave({ resetConnections: { times: 1 } });
    const before = await metric(ctx.gw, 'atrium_upstream_retries_total', { upstream: 'macro' });
    const got = await http(ctx.gw.url + fresh(), { headers: { authorization: `Bearer ${reader.key}` } });
    expect(got.status).toBe(200);
    expect(ctx.fake.requests).toHaveLength(2);
    expect(await metric(ctx.gw, 'atrium_upstream_retries_total', { upstream: 'macro' })).toBe(before + 1);
  });
});

describe('circuit breaker with the fake down', () => {
  const ctx = gatewayFor(
    {
      UPSTREAM_MACRO_RATE_PER_SEC: '200',
      UPSTREAM_MACRO_BURST: '50',
      UPSTREAM_MACRO_BREAKER_MIN_SAMPLE: '5',
      UPSTREAM_MACRO_BREAKER_FAILURE_RATIO: '0.5',
      // Long enough that the burst below is answered while the breaker is still open, on a loaded machine.
      UPSTREAM_MACRO_BREAKER_OPEN_MS: '3000',
      UPSTREAM_MACRO_RETRY_BASE_MS: '20',
      UPSTREAM_MACRO_RETRY_MAX_BACKOFF_MS: '100',
    },
    [reader],
  );
  const get = (path: string) =>
    http(ctx.gw.url + path, { headers: { authorization: `Bearer ${reader.key}` } });

  it('stops calling after the sample, lets one probe through, recovers', async () => {
    const { fake, gw } = ctx;
    fake.behave({ resetConnections: {} }); // every call: connection reset (the fake still counts them)
    // Sequential calls; each failing GET is tried up to 3 times, every attempt counts for the breaker.
    const answers: HttpResult[] = [];
    for (let i = 0; i < 4; i++) answers.push(await get(fresh()));
    const sample = fake.requests.length;
    // 3 attempts, then 1 (the retry budget's floor of 2 is spent), then 1: that 5th failure opens it.
    expect(sample).toBe(5);
    expect(answers.every((a) => a.status === 503)).toBe(true);
    expect(answers.map((a) => a.json().error.upstreamCode)).toEqual([
      'ECONNRESET',
      'ECONNRESET',
      'ECONNRESET',
      'CIRCUIT_OPEN',
    ]);
    expect((await readiness(gw)).breaker).toBe('open');
    expect(await metric(gw, 'atrium_upstream_breaker_state', { upstream: 'macro' })).toBe(2);

    // Open: answered at once, nothing reaches the fake.
    const burst = await Promise.all(Array.from({ length: 20 }, () => get(fresh())));
    for (const r of burst) {
      expect(r.status).toBe(503);
      expect(r.json().error.upstreamCode).toBe('CIRCUIT_OPEN');
      expect(Number(r.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    expect(fake.requests.length).toBe(sample);

    // Half-open: of many concurrent calls exactly one probe reaches the (still broken) fake.
    await eventually(async () => (await readiness(gw)).breaker === 'half-open', { what: 'half-open' });
    const probeRound = await Promise.all(Array.from({ length: 10 }, () => get(fresh())));
    expect(fake.requests.length).toBe(sample + 1);
    expect(probeRound.filter((r) => r.json().error?.upstreamCode === 'CIRCUIT_OPEN')).toHaveLength(9);
    expect((await readiness(gw)).breaker).toBe('open');

    // The upstream recovers: the next probe succeeds and the breaker closes.
    fake.reset();
    await eventually(async () => (await readiness(gw)).breaker === 'half-open', { what: 'half-open again' });
    const recovered = await Promise.all(Array.from({ length: 5 }, () => get(fresh())));
    expect(recovered.filter((r) => r.status === 200).length).toBeGreaterThanOrEqual(1);
    for (let i = 0; i < 5; i++) expect((await get(fresh())).status).toBe(200);
    expect((await readiness(gw)).breaker).toBe('closed');
    expect(await metric(gw, 'atrium_upstream_breaker_state', { upstream: 'macro' })).toBe(0);
  });
});

describe('upstream 429 without a reset header', () => {
  const ctx = gatewayFor(
    {
      UPSTREAM_MACRO_RATE_PER_SEC: '200',
      UPSTREAM_MACRO_BURST: '50',
      UPSTREAM_MACRO_COOLDOWN_DEFAULT_SECONDS: '2',
      // One attempt, so each answer shows one cooldown (retries after a 429 are covered in retry-stage.spec).
      UPSTREAM_MACRO_RETRY_ATTEMPTS: '1',
    },
    [reader],
  );
  const get = (path: string) =>
    http(ctx.gw.url + path, { headers: { authorization: `Bearer ${reader.key}` } });

  it('cools down for the configured default, doubling on repeats; readiness and metrics show it', async () => {
    const { fake, gw } = ctx;
    fake.behave({ rateLimit: { afterCalls: 0, retryAfterSeconds: 30, header: 'none' } });
    const first = await get(fresh());
    expect(first.status).toBe(429);
    expect(first.headers['retry-after']).toBe('2'); // UPSTREAM_MACRO_COOLDOWN_DEFAULT_SECONDS
    const calls = fake.requests.length;
    expect(calls).toBe(1);
    const during = await get(fresh());
    expect(during.status).toBe(429);
    expect(during.json().error).toMatchObject({ code: 'UPSTREAM_RATE_LIMITED', upstream: 'macro' });
    expect(fake.requests.length).toBe(calls);
    const facts = await readiness(gw);
    expect(facts.cooldownRemainingSeconds).toBeGreaterThanOrEqual(1);
    expect(facts.cooldownRemainingSeconds).toBeLessThanOrEqual(2);
    expect(facts.bucket).toMatchObject({
      configuredRatePerSec: 200,
      learnedRatePerSec: 100,
      burst: 50,
      tokens: 0,
    });
    expect(await metric(gw, 'atrium_upstream_cooldown_seconds', { upstream: 'macro' })).toBeGreaterThan(0);
    expect(await metric(gw, 'atrium_upstream_rate_learned', { upstream: 'macro' })).toBe(100);
    expect(await metric(gw, 'atrium_upstream_rate_configured', { upstream: 'macro' })).toBe(200);
    expect(
      await metric(gw, 'atrium_rate_limited_total', { upstream: 'macro', kind: 'upstream' }),
    ).toBeGreaterThanOrEqual(2);
    await eventually(async () => !((await readiness(gw)).cooldownRemainingSeconds > 0), {
      what: 'the cooldown to end',
    });
    // The vendor is still limiting, still without a header: the default doubles.
    const again = await get(fresh());
    expect(again.status).toBe(429);
    expect(again.headers['retry-after']).toBe('4');
    // The vendor recovers and an operator lifts the cooldown rather than wait it out.
    fake.reset();
    await gw.app.get(UpstreamLimitsService).limiter('macro')!.liftCooldown();
    // Lifting releases the bucket gradually: the first call may still wait for a token.
    await eventually(async () => (await get(fresh())).status === 200, { what: 'a 200 after the lift' });
  });
});

describe('fairness while the budget is the bottleneck (single instance)', () => {
  const noisy = testConsumer({ id: 'noisy', upstreams: new Set(['macro']) });
  const quiet = testConsumer({ id: 'quiet', upstreams: new Set(['macro']) });
  const vip = testConsumer({ id: 'vip', upstreams: new Set(['macro']), weight: 3 });
  // Enough answers per window that a share is a measurement, not a handful of integers.
  const RATE = 40;
  const fake = new FakeMacroUpstream({ token: TOKEN });
  const gw = withGateway({
    upstreams: { macro: { fake, token: TOKEN } },
    env: {
      UPSTREAM_MACRO_RATE_PER_SEC: String(RATE),
      UPSTREAM_MACRO_BURST: '1',
      // Longer than any request waits here (the noisy app's 100 at its weighted share, 10 a second: 10 s).
      // With a shorter bound the noisy app's backlog, sent at once, also expired at once: until its clients
      // sent again its flow was empty, and the other app took every token (the queue is work-conserving),
      // the more so the slower the machine.
      UPSTREAM_MACRO_MAX_WAIT_MS: '15000',
    },
    consumers: [noisy, quiet, vip],
    // The tests run in order on one fake and read what it recorded as they go.
    resetFakes: false,
  });

  /**
   * Closed-loop clients: `concurrency` requests always outstanding per consumer. Enough of them that each
   * consumer stays backlogged at the gateway even when the test process answers slowly. Only answers in the
   * `ms` after `warmupMs` count: at the start the noisy app's first requests simply arrive first.
   */
  async function drive(clients: Array<{ key: string; concurrency: number }>, warmupMs: number, ms: number) {
    const served = clients.map(() => 0);
    const from = Date.now() + warmupMs;
    const until = from + ms;
    const loop = async (i: number) => {
      while (Date.now() < until) {
        const res = await http(gw.url + fresh(), { headers: { authorization: `Bearer ${clients[i].key}` } });
        const now = Date.now();
        if (res.status === 200 && now >= from && now <= until) served[i]++;
      }
    };
    await Promise.all(clients.flatMap((c, i) => Array.from({ length: c.concurrency }, () => loop(i))));
    return served;
  }

  it('equal weights: the app sending 10× as much gets about the same share, not 10×', async () => {
    const [n, q] = await drive(
      [
        { key: noisy.key, concurrency: 100 },
        { key: quiet.key, concurrency: 10 },
      ],
      2500,
      4000,
    );
    expect(n + q).toBeGreaterThan(RATE * 2); // the budget was the bottleneck and was spent
    // Without fair queueing it would be about 10; a little slack for a loaded machine's round trips.
    expect(n / q).toBeGreaterThan(0.67);
    expect(n / q).toBeLessThan(1.5);
  });

  it('weights: a weight-3 app sending a tenth as much gets three times the share', async () => {
    const [n, v] = await drive(
      [
        { key: noisy.key, concurrency: 100 },
        { key: vip.key, concurrency: 10 },
      ],
      2500,
      4000,
    );
    expect(v / n).toBeGreaterThan(2.2);
    expect(v / n).toBeLessThan(4);
  });
});
