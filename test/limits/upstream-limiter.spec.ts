import { GatewayError } from '../../src/core/errors/gateway-error.js';
import { UpstreamLimiter } from '../../src/proxy/limits/upstream-limiter.js';
import { limiterOptions, outcome, proxyRequest } from '../helpers/proxy-request.js';

const upstream429 = (retryAfterSeconds?: number) =>
  new GatewayError('UPSTREAM_RATE_LIMITED', {
    upstream: 't',
    upstreamStatus: 429,
    fromUpstream: true,
    retryAfterSeconds,
  });
const upstream503 = () =>
  new GatewayError('UPSTREAM_ERROR', { upstream: 't', upstreamStatus: 503, fromUpstream: true });

describe('UpstreamLimiter (single instance), fake timers', () => {
  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-11-23T10:00:00Z') }));
  afterEach(() => jest.useRealTimers());

  /** One full call through the limiter: admission, then the given outcome. */
  async function call(l: UpstreamLimiter, result: 'ok' | GatewayError, partial = {}): Promise<unknown> {
    const permit = await l.acquire(proxyRequest(partial));
    if (result === 'ok') {
      l.settleSuccess(permit);
      return 'ok';
    }
    throw await l.settleError(permit, result);
  }

  it('spends the burst at once, then waits for refills up to maxWaitMs, then answers 429 with Retry-After', async () => {
    const l = new UpstreamLimiter(limiterOptions({ ratePerSec: 10, burst: 2, maxWaitMs: 550 }));
    const started = Date.now();
    const done: number[] = [];
    const all = Array.from({ length: 10 }, () =>
      outcome(l.acquire(proxyRequest()).then(() => done.push(Date.now() - started))),
    );
    await jest.advanceTimersByTimeAsync(600);
    const results = await Promise.all(all);
    // 2 at once, then one every 100 ms while the 550 ms bound lasts.
    expect(done.slice(0, 2)).toEqual([0, 0]);
    expect(done.length).toBe(7);
    expect(done[6]).toBe(500);
    const refused = results.filter((r): r is GatewayError => r instanceof GatewayError);
    expect(refused).toHaveLength(3);
    for (const e of refused) {
      expect(e.code).toBe('UPSTREAM_RATE_LIMITED');
      expect(e.status).toBe(429);
      expect(e.fromUpstream).toBe(false);
      expect(e.retryAfterSeconds).toBeGreaterThanOrEqual(1);
    }
  });

  it('refuses at once when the bucket cannot refill within the bound', async () => {
    const l = new UpstreamLimiter(limiterOptions({ ratePerSec: 1, burst: 1, maxWaitMs: 200 }));
    await l.acquire(proxyRequest());
    await expect(l.acquire(proxyRequest())).rejects.toMatchObject({
      code: 'UPSTREAM_RATE_LIMITED',
      retryAfterSeconds: 1,
    });
    expect(l.facts().queued).toBe(0);
  });

  it('a route cost spends that many tokens', async () => {
    const l = new UpstreamLimiter(limiterOptions({ burst: 4, maxCost: 3, maxWaitMs: 10 }));
    const heavy = { ...proxyRequest().route, cost: 3 };
    await l.acquire(proxyRequest({ route: heavy }));
    await l.acquire(proxyRequest());
    await expect(l.acquire(proxyRequest())).rejects.toMatchObject({ code: 'UPSTREAM_RATE_LIMITED' });
  });

  it('refuses to build when a route costs more than the burst', () => {
    expect(() => new UpstreamLimiter(limiterOptions({ burst: 2, maxCost: 3 }))).toThrow('costs 3 tokens');
  });

  it('an upstream 429 starts a cooldown: answered at once with the remaining Retry-After, waiters refused', async () => {
    const l = new UpstreamLimiter(limiterOptions({ burst: 1, maxWaitMs: 5000 }));
    const first = await l.acquire(proxyRequest());
    const waiting = outcome(l.acquire(proxyRequest())); // queued for the next token
    await jest.advanceTimersByTimeAsync(10);
    const err = (await l.settleError(first, upstream429(5))) as GatewayError;
    expect(err.retryAfterSeconds).toBe(5);
    expect(await waiting).toMatchObject({ code: 'UPSTREAM_RATE_LIMITED', retryAfterSeconds: 5 });
    await jest.advanceTimersByTimeAsync(2100);
    await expect(l.acquire(proxyRequest())).rejects.toMatchObject({
      code: 'UPSTREAM_RATE_LIMITED',
      retryAfterSeconds: 3,
      fromUpstream: false,
    });
    expect(l.facts()).toMatchObject({ cooldownRemainingSeconds: 3, bucket: { tokens: 0 } });
  });

  it('after a cooldown traffic comes back gradually: empty bucket, halved rate', async () => {
    const l = new UpstreamLimiter(limiterOptions({ ratePerSec: 10, burst: 10, maxWaitMs: 2000 }));
    const first = await l.acquire(proxyRequest());
    await l.settleError(first, upstream429(1));
    expect(l.learnedRate()).toBe(5);
    await jest.advanceTimersByTimeAsync(1000);
    // 20 waiters arrive as the cooldown ends: not all at once, 5 per second.
    let granted = 0;
    const all = Array.from({ length: 20 }, () => outcome(l.acquire(proxyRequest()).then(() => granted++)));
    await jest.advanceTimersByTimeAsync(1000);
    expect(granted).toBeGreaterThanOrEqual(4);
    expect(granted).toBeLessThanOrEqual(6);
    await jest.advanceTimersByTimeAsync(1100);
    await Promise.all(all);
  });

  const fixedRate = { enabled: false, minRate: 10, maxRate: 10, decrease: 0.5, increasePerSec: 1 };

  it('no reset header: the configured default, doubling on repeats up to the maximum', async () => {
    const l = new UpstreamLimiter(limiterOptions({ burst: 5, maxWaitMs: 5000, aimd: fixedRate }));
    const seconds: number[] = [];
    for (let i = 0; i < 4; i++) {
      const e = (await call(l, upstream429()).catch((x: unknown) => x)) as GatewayError;
      seconds.push(e.retryAfterSeconds!);
      await jest.advanceTimersByTimeAsync(e.retryAfterSeconds! * 1000 + 500);
    }
    expect(seconds).toEqual([2, 4, 7, 7]);
    // A vendor header resets the streak; the next header-less 429 starts from the default again.
    await call(l, upstream429(1)).catch(() => undefined);
    await jest.advanceTimersByTimeAsync(1500);
    const e = (await call(l, upstream429()).catch((x: unknown) => x)) as GatewayError;
    expect(e.retryAfterSeconds).toBe(2);
  });

  it('a vendor header is honoured up to the cooldown maximum, never beyond (an absurd one included)', async () => {
    const l = new UpstreamLimiter(limiterOptions({ burst: 5, maxWaitMs: 5000, aimd: fixedRate }));
    const near = (await call(l, upstream429(5)).catch((x: unknown) => x)) as GatewayError;
    expect(near.retryAfterSeconds).toBe(5);
    await jest.advanceTimersByTimeAsync(5500);
    const absurd = (await call(l, upstream429(86_400)).catch((x: unknown) => x)) as GatewayError;
    expect(absurd.retryAfterSeconds).toBe(7); // limiterOptions: cooldown max 7 s
    expect(l.facts().cooldownRemainingSeconds).toBe(7);
    await jest.advanceTimersByTimeAsync(7100);
    await expect(call(l, 'ok')).resolves.toBe('ok');
  });

  it('a repeat only counts while it follows closely; later the default starts over', async () => {
    const l = new UpstreamLimiter(limiterOptions({ burst: 5, maxWaitMs: 5000, aimd: fixedRate }));
    const a = (await call(l, upstream429()).catch((x: unknown) => x)) as GatewayError;
    expect(a.retryAfterSeconds).toBe(2);
    await jest.advanceTimersByTimeAsync(60_000);
    const b = (await call(l, upstream429()).catch((x: unknown) => x)) as GatewayError;
    expect(b.retryAfterSeconds).toBe(2);
  });

  it('429s of calls already in flight do not lower the rate twice or shorten the cooldown', async () => {
    const l = new UpstreamLimiter(
      limiterOptions({ burst: 3, cooldown: { defaultSeconds: 2, maxSeconds: 30 } }),
    );
    const permits = [];
    for (let i = 0; i < 3; i++) permits.push(await l.acquire(proxyRequest()));
    await l.settleError(permits[0], upstream429(10));
    const e1 = (await l.settleError(permits[1], upstream429(3))) as GatewayError;
    expect(e1.retryAfterSeconds).toBe(10);
    const e2 = (await l.settleError(permits[2], upstream429(20))) as GatewayError; // a later reset moves it
    expect(e2.retryAfterSeconds).toBe(20);
    expect(l.learnedRate()).toBe(5);
  });

  it('AIMD: the learned rate grows back additively while calls succeed, up to the configured maximum', async () => {
    const l = new UpstreamLimiter(limiterOptions({ burst: 5, maxWaitMs: 5000 }));
    await call(l, upstream429(1)).catch(() => undefined);
    expect(l.learnedRate()).toBe(5);
    await jest.advanceTimersByTimeAsync(1000);
    for (let i = 0; i < 3; i++) {
      await jest.advanceTimersByTimeAsync(1000);
      await call(l, 'ok');
    }
    expect(l.learnedRate()).toBeCloseTo(8);
    for (let i = 0; i < 10; i++) {
      await jest.advanceTimersByTimeAsync(1000);
      await call(l, 'ok');
    }
    expect(l.learnedRate()).toBe(10);
    expect(l.facts().bucket).toMatchObject({ configuredRatePerSec: 10, learnedRatePerSec: 10 });
  });

  it('breaker: opens on failures (not on 429s), refuses at once with 503 CIRCUIT_OPEN, one probe, closes', async () => {
    const l = new UpstreamLimiter(limiterOptions({ burst: 10, ratePerSec: 100 }));
    for (let i = 0; i < 6; i++) await call(l, upstream429(0.001)).catch(() => undefined);
    await jest.advanceTimersByTimeAsync(1500);
    expect(l.breakerState()).toBe('closed');
    for (let i = 0; i < 4; i++) await call(l, upstream503()).catch(() => undefined);
    expect(l.breakerState()).toBe('open');
    await expect(l.acquire(proxyRequest())).rejects.toMatchObject({
      code: 'UPSTREAM_UNAVAILABLE',
      status: 503,
      upstreamCode: 'CIRCUIT_OPEN',
    });
    await jest.advanceTimersByTimeAsync(1000);
    expect(l.breakerState()).toBe('half-open');
    const probe = await l.acquire(proxyRequest());
    await expect(l.acquire(proxyRequest())).rejects.toMatchObject({ upstreamCode: 'CIRCUIT_OPEN' });
    l.settleSuccess(probe);
    expect(l.breakerState()).toBe('closed');
    await expect(call(l, 'ok')).resolves.toBe('ok');
  });

  it('refuseNow says what acquire would refuse at once (cooldown, open breaker) and changes nothing', async () => {
    const l = new UpstreamLimiter(limiterOptions({ burst: 10, ratePerSec: 100 }));
    expect(l.refuseNow()).toBeUndefined();
    const tokens = l.facts().bucket.tokens;
    const first = await l.acquire(proxyRequest());
    await l.settleError(first, upstream429(5));
    expect(l.refuseNow()).toMatchObject({ code: 'UPSTREAM_RATE_LIMITED', retryAfterSeconds: 5 });
    expect(l.refuseNow()).toMatchObject({ code: 'UPSTREAM_RATE_LIMITED', retryAfterSeconds: 5 });
    await jest.advanceTimersByTimeAsync(5100);
    expect(l.refuseNow()).toBeUndefined();
    // Asking took no token (the bucket is what the cooldown left) and let no probe out.
    expect(l.facts().bucket.tokens).toBeLessThanOrEqual(tokens);
    for (let i = 0; i < 4; i++) await call(l, upstream503()).catch(() => undefined);
    expect(l.breakerState()).toBe('open');
    expect(l.refuseNow()).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', upstreamCode: 'CIRCUIT_OPEN' });
    await jest.advanceTimersByTimeAsync(1000);
    // Half-open: the probe is acquire's to take, not refused here.
    expect(l.refuseNow()).toBeUndefined();
    expect(l.breakerState()).toBe('half-open');
    const probe = await l.acquire(proxyRequest());
    l.settleSuccess(probe);
    expect(l.breakerState()).toBe('closed');
  });

  it('a probe refused by the budget frees the probe slot', async () => {
    const l = new UpstreamLimiter(
      limiterOptions({
        burst: 4,
        ratePerSec: 0.1,
        maxWaitMs: 10,
        aimd: { ...fixedRate, minRate: 0.1, maxRate: 0.1 },
      }),
    );
    for (let i = 0; i < 4; i++) await call(l, upstream503()).catch(() => undefined);
    await jest.advanceTimersByTimeAsync(1000);
    // Half-open, but the bucket is empty: the would-be probe is refused for budget, not for the breaker.
    await expect(l.acquire(proxyRequest())).rejects.toMatchObject({ code: 'UPSTREAM_RATE_LIMITED' });
    await jest.advanceTimersByTimeAsync(10_000);
    const probe = await l.acquire(proxyRequest());
    l.settleSuccess(probe);
    expect(l.breakerState()).toBe('closed');
  });

  it('fair: two consumers, one with 10× the waiting requests, share a short budget by weight', async () => {
    const l = new UpstreamLimiter(limiterOptions({ ratePerSec: 20, burst: 1, maxWaitMs: 60_000 }));
    const served: Record<string, number> = { noisy: 0, quiet: 0 };
    let stop = false;
    const loop = async (consumerId: string): Promise<void> => {
      while (!stop) {
        const r = await outcome(l.acquire(proxyRequest({ consumerId, deadline: Date.now() + 60_000 })));
        if (!(r instanceof Error) && !stop) served[consumerId]++;
      }
    };
    const loops = [
      ...Array.from({ length: 30 }, () => loop('noisy')),
      ...Array.from({ length: 3 }, () => loop('quiet')),
    ];
    await jest.advanceTimersByTimeAsync(10_000);
    stop = true;
    l.close();
    await jest.advanceTimersByTimeAsync(100);
    await Promise.all(loops);
    expect(served.noisy + served.quiet).toBeGreaterThanOrEqual(195);
    expect(served.noisy / served.quiet).toBeGreaterThan(0.9);
    expect(served.noisy / served.quiet).toBeLessThan(1.1);
  });
});
