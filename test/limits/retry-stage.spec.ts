import { GatewayError } from '../../src/core/errors/gateway-error.js';
import { settled } from '../helpers/answer.js';
import { compose } from '../../src/proxy/compose.js';
import { RetryBudget } from '../../src/proxy/limits/retry-budget.js';
import { mayRetry, type RetryOptions } from '../../src/proxy/stages/retries.js';
import { upstreamLimitStage, type LimitGate } from '../../src/proxy/stages/upstream-limit.stage.js';
import { UpstreamLimiter } from '../../src/proxy/limits/upstream-limiter.js';
import type { Handler, HttpMethod, ProxyRequest, ProxyResponse } from '../../src/proxy/pipeline.types.js';
import { GET_ROUTE, limiterOptions, proxyRequest } from '../helpers/proxy-request.js';

const OK: ProxyResponse = { status: 200, headers: {}, body: Buffer.from('{}') };

const errors = {
  reset: () => new GatewayError('UPSTREAM_UNAVAILABLE', { upstream: 't', upstreamCode: 'ECONNRESET' }),
  refused: () => new GatewayError('UPSTREAM_UNAVAILABLE', { upstream: 't', upstreamCode: 'ECONNREFUSED' }),
  e502: () => new GatewayError('UPSTREAM_ERROR', { upstream: 't', upstreamStatus: 502, fromUpstream: true }),
  e503: () => new GatewayError('UPSTREAM_ERROR', { upstream: 't', upstreamStatus: 503, fromUpstream: true }),
  e504: () =>
    new GatewayError('UPSTREAM_TIMEOUT', { upstream: 't', upstreamStatus: 504, fromUpstream: true }),
  e500: () => new GatewayError('UPSTREAM_ERROR', { upstream: 't', upstreamStatus: 500, fromUpstream: true }),
  e400: () =>
    new GatewayError('UPSTREAM_BAD_REQUEST', { upstream: 't', upstreamStatus: 400, fromUpstream: true }),
  e404: () => new GatewayError('NOT_FOUND', { upstream: 't', upstreamStatus: 404, fromUpstream: true }),
  circuit: () => new GatewayError('UPSTREAM_UNAVAILABLE', { upstream: 't', upstreamCode: 'CIRCUIT_OPEN' }),
  ownBudget: () => new GatewayError('UPSTREAM_RATE_LIMITED', { upstream: 't', retryAfterSeconds: 1 }),
  upstream429: (s?: number) =>
    new GatewayError('UPSTREAM_RATE_LIMITED', {
      upstream: 't',
      upstreamStatus: 429,
      fromUpstream: true,
      retryAfterSeconds: s,
    }),
};

/** A terminal that fails with the given errors, in order, then succeeds; it counts the calls. */
function flaky(...failures: Array<() => GatewayError>): Handler & { calls: number } {
  const h = Object.assign(
    async (): Promise<ProxyResponse> => {
      h.calls++;
      const f = failures[h.calls - 1];
      if (f) throw f();
      return OK;
    },
    { calls: 0 },
  );
  return h;
}

/** A limiter that admits every attempt and passes every outcome on: the retry rules alone. */
const ADMIT_ALL: LimitGate = {
  acquire: () => Promise.resolve({}),
  acquireRetry: () => Promise.resolve({}),
  settleSuccess: () => undefined,
  settleError: (_permit, err) => Promise.resolve(err),
};

function setup(opts: Partial<RetryOptions> = {}) {
  const waits: number[] = [];
  let clock = Date.now();
  const stage = upstreamLimitStage({
    gate: ADMIT_ALL,
    retry: {
      attempts: 3,
      baseMs: 100,
      maxBackoffMs: 2000,
      budget: new RetryBudget({ ratio: 0.2, minPerWindow: 100 }),
      now: () => clock,
      sleep: async (ms) => {
        waits.push(ms);
        clock += ms;
      },
      ...opts,
    },
  });
  return { stage, waits, advance: (ms: number) => (clock += ms) };
}

describe('retry stage', () => {
  it.each(['reset', 'refused', 'e502', 'e503', 'e504'] as const)(
    'an idempotent GET is retried after %s',
    async (kind) => {
      const { stage, waits } = setup();
      const up = flaky(errors[kind]);
      await expect(stage(up)(proxyRequest())).resolves.toBe(OK);
      expect(up.calls).toBe(2);
      expect(waits).toHaveLength(1);
      expect(waits[0]).toBeGreaterThanOrEqual(0);
      expect(waits[0]).toBeLessThan(100);
    },
  );

  it.each(['e500', 'e400', 'e404', 'circuit', 'ownBudget'] as const)('%s is not retried', async (kind) => {
    const { stage } = setup();
    const up = flaky(errors[kind]);
    await expect(stage(up)(proxyRequest())).rejects.toBeInstanceOf(GatewayError);
    expect(up.calls).toBe(1);
  });

  it.each(['POST', 'PUT', 'PATCH', 'DELETE'] as HttpMethod[])('a %s is never retried', async (method) => {
    const { stage } = setup();
    const up = flaky(errors.reset, errors.reset);
    const req = proxyRequest({ method, route: { ...GET_ROUTE, method } });
    await expect(stage(up)(req)).rejects.toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
    expect(up.calls).toBe(1);
  });

  it('a GET with a side effect or a file GET is never retried', async () => {
    for (const route of [
      { ...GET_ROUTE, sideEffect: true },
      { ...GET_ROUTE, file: true },
    ]) {
      const { stage } = setup();
      const up = flaky(errors.e503);
      await expect(stage(up)(proxyRequest({ route }))).rejects.toMatchObject({ code: 'UPSTREAM_ERROR' });
      expect(up.calls).toBe(1);
      expect(mayRetry(proxyRequest({ route }))).toBe(false);
    }
  });

  it('gives up after the configured attempts, with growing full-jitter backoff', async () => {
    const { stage, waits } = setup({ attempts: 4, random: () => 0.999 });
    const up = flaky(errors.e503, errors.e503, errors.e503, errors.e503);
    await expect(stage(up)(proxyRequest())).rejects.toMatchObject({ upstreamStatus: 503 });
    expect(up.calls).toBe(4);
    expect(waits).toEqual([99, 199, 399]);
  });

  it('the total deadline includes the retries: no retry that cannot finish in time', async () => {
    const { stage } = setup({ random: () => 0.999 });
    const up = flaky(errors.e503, errors.e503);
    const req = proxyRequest({ deadline: Date.now() + 150 });
    await expect(stage(up)(req)).rejects.toMatchObject({ upstreamStatus: 503 });
    expect(up.calls).toBe(1);
  });

  it('an upstream 429 is retried after its Retry-After when that fits the deadline', async () => {
    const { stage, waits } = setup({ random: () => 0 });
    const up = flaky(() => errors.upstream429(2));
    await expect(stage(up)(proxyRequest({ deadline: Date.now() + 5000 }))).resolves.toBe(OK);
    expect(waits).toEqual([2000]);
  });

  it('an upstream 429 whose wait does not fit the deadline is passed on at once', async () => {
    const { stage, waits } = setup();
    const up = flaky(() => errors.upstream429(30));
    await expect(stage(up)(proxyRequest({ deadline: Date.now() + 5000 }))).rejects.toMatchObject({
      code: 'UPSTREAM_RATE_LIMITED',
      retryAfterSeconds: 30,
    });
    expect(up.calls).toBe(1);
    expect(waits).toEqual([]);
  });

  it('each attempt starts from the call as it came: what the stages inside wrote is not sent twice', async () => {
    const { stage } = setup();
    const sent: Array<{ query: string; header?: string }> = [];
    const up = flaky(errors.e503, errors.e503);
    const credential: Handler = (req) => {
      req.query.push(['key', 'upstream-key']);
      req.headers['x-key'] = `${req.headers['x-key'] ?? ''}k`;
      sent.push({ query: JSON.stringify(req.query), header: req.headers['x-key'] });
      return up(req);
    };
    await expect(stage(credential)(proxyRequest({ query: [['limit', '2']] }))).resolves.toBe(OK);
    const once = {
      query: JSON.stringify([
        ['limit', '2'],
        ['key', 'upstream-key'],
      ]),
      header: 'k',
    };
    expect(sent).toEqual([once, once, once]);
  });

  it('the retry budget caps retries at ~20 % of recent calls', async () => {
    const budget = new RetryBudget({ ratio: 0.2, minPerWindow: 0 });
    const { stage } = setup({ budget, attempts: 2 });
    let upstreamCalls = 0;
    const down: Handler = async () => {
      upstreamCalls++;
      throw errors.e503();
    };
    const h = stage(down);
    for (let i = 0; i < 100; i++) await settled(h, proxyRequest()).catch(() => undefined);
    expect(upstreamCalls).toBe(120);
  });

  describe('with the upstream limiter', () => {
    beforeEach(() => jest.useFakeTimers({ now: new Date('2026-11-23T10:00:00Z') }));
    afterEach(() => jest.useRealTimers());

    function pipeline(limiter: UpstreamLimiter, up: Handler, attempts = 3): Handler {
      return compose(
        [
          upstreamLimitStage({
            gate: limiter,
            retry: {
              attempts,
              baseMs: 10,
              maxBackoffMs: 100,
              budget: new RetryBudget({ ratio: 0.2, minPerWindow: 100 }),
            },
          }),
        ],
        up,
      );
    }

    it('every retry spends a token; without one in time the client hears the real failure', async () => {
      const limiter = new UpstreamLimiter(limiterOptions({ ratePerSec: 0.5, burst: 1, maxWaitMs: 200 }));
      const up = flaky(errors.e503, errors.e503);
      const p = settled(pipeline(limiter, up), proxyRequest()).catch((e: unknown) => e);
      await jest.advanceTimersByTimeAsync(1000);
      expect(await p).toMatchObject({ code: 'UPSTREAM_ERROR', upstreamStatus: 503 });
      expect(up.calls).toBe(1);
    });

    it('each attempt counts for the breaker: after it opens, the retry is refused and nothing more is sent', async () => {
      const limiter = new UpstreamLimiter(
        limiterOptions({
          ratePerSec: 100,
          burst: 20,
          breaker: { failureRatio: 0.5, minSample: 4, windowMs: 10_000, openMs: 1000 },
        }),
      );
      const up = flaky(errors.reset, errors.reset, errors.reset, errors.reset, errors.reset, errors.reset);
      const h = pipeline(limiter, up);
      const first = settled(h, proxyRequest()).catch((e: unknown) => e);
      await jest.advanceTimersByTimeAsync(500);
      expect(await first).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
      expect(up.calls).toBe(3);
      const second = settled(h, proxyRequest()).catch((e: unknown) => e);
      await jest.advanceTimersByTimeAsync(500);
      expect(await second).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE', upstreamCode: 'ECONNRESET' });
      expect(up.calls).toBe(4); // the 4th failure opened the breaker; its retry was refused
      expect(limiter.breakerState()).toBe('open');
      await expect(h(proxyRequest())).rejects.toMatchObject({ upstreamCode: 'CIRCUIT_OPEN' });
      expect(up.calls).toBe(4);
    });

    it('an upstream 429 without a header cools down for the configured default; the retry waits it out', async () => {
      const limiter = new UpstreamLimiter(
        limiterOptions({ ratePerSec: 10, burst: 5, cooldown: { defaultSeconds: 2, maxSeconds: 10 } }),
      );
      const up = flaky(() => errors.upstream429(undefined));
      const req: ProxyRequest = proxyRequest({ deadline: Date.now() + 8000 });
      const p = pipeline(limiter, up)(req);
      await jest.advanceTimersByTimeAsync(100);
      // Meanwhile others are answered at once, without calling the upstream.
      await expect(pipeline(limiter, up)(proxyRequest())).rejects.toMatchObject({
        code: 'UPSTREAM_RATE_LIMITED',
        retryAfterSeconds: 2,
      });
      expect(up.calls).toBe(1);
      await jest.advanceTimersByTimeAsync(3000);
      await expect(p).resolves.toBe(OK);
      expect(up.calls).toBe(2);
    });
  });
});
