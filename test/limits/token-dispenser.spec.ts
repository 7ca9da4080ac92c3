import { GatewayError } from '../../src/core/errors/gateway-error.js';
import { BudgetSource } from '../../src/proxy/limits/budget-source.js';
import { UpstreamLimitState } from '../../src/proxy/limits/limiter-state.js';
import { TokenDispenser } from '../../src/proxy/limits/token-dispenser.js';
import { limiterOptions, outcome } from '../helpers/proxy-request.js';

/** A dispenser over a local bucket (single instance), as the limiter builds it. */
function dispenser(partial: Parameters<typeof limiterOptions>[0] = {}) {
  const o = limiterOptions(partial);
  const now = () => Date.now();
  const state = new UpstreamLimitState(o, false, now());
  const budget = new BudgetSource(state, { name: 't', localShare: o.localShare, burst: o.burst, now });
  const cooldowns: number[] = [];
  const d: TokenDispenser = new TokenDispenser({
    name: 't',
    burst: o.burst,
    budget,
    now,
    reservedShareOf: () => 0,
    onCooldown: (ms) => cooldowns.push(ms),
    budgetError: (cost) =>
      new GatewayError('UPSTREAM_RATE_LIMITED', { message: `spent (${d.cost + cost} ahead)` }),
  });
  return { d, state, budget, cooldowns };
}

describe('TokenDispenser (fair hand-out of a local bucket), fake timers', () => {
  beforeEach(() => jest.useFakeTimers({ now: new Date('2026-11-23T10:00:00Z') }));
  afterEach(() => jest.useRealTimers());

  it('grants synchronously while the bucket has tokens and nobody waits', () => {
    const { d } = dispenser({ burst: 2 });
    expect(d.tokens(1, { consumerId: 'a', weight: 1 }, Date.now() + 500)).toBeUndefined();
    expect(d.tokens(1, { consumerId: 'a', weight: 1 }, Date.now() + 500)).toBeUndefined();
    expect(d.size).toBe(0);
  });

  it('refuses at once what the bucket cannot refill before the deadline', () => {
    const { d } = dispenser({ ratePerSec: 1, burst: 1 });
    expect(d.tokens(1, { consumerId: 'a', weight: 1 }, Date.now() + 500)).toBeUndefined();
    expect(() => d.tokens(1, { consumerId: 'a', weight: 1 }, Date.now() + 500)).toThrow(/spent/);
  });

  it('serves waiters of two consumers alternately as tokens refill, each within its bound', async () => {
    const { d } = dispenser({ ratePerSec: 10, burst: 1 });
    expect(d.tokens(1, { consumerId: 'a', weight: 1 }, Date.now() + 1_000)).toBeUndefined();
    const order: string[] = [];
    const wait = (c: string) =>
      outcome(Promise.resolve(d.tokens(1, { consumerId: c, weight: 1 }, Date.now() + 1_000))).then((r) =>
        order.push(r instanceof Error ? `${c}:refused` : c),
      );
    const all = [wait('a'), wait('a'), wait('a'), wait('b')];
    expect(d.size).toBe(4);
    await jest.advanceTimersByTimeAsync(450);
    await Promise.all(all);
    expect(order).toEqual(['a', 'b', 'a', 'a']);
    expect(d.size).toBe(0);
  });

  it('rejects a waiter whose bound passes, with the cost still queued ahead in the error', async () => {
    const { d } = dispenser({ ratePerSec: 1, burst: 1 });
    expect(d.tokens(1, { consumerId: 'a', weight: 1 }, Date.now() + 5_000)).toBeUndefined();
    const first = outcome(Promise.resolve(d.tokens(1, { consumerId: 'a', weight: 1 }, Date.now() + 5_000)));
    const second = outcome(Promise.resolve(d.tokens(1, { consumerId: 'b', weight: 1 }, Date.now() + 200)));
    await jest.advanceTimersByTimeAsync(250);
    expect(await second).toMatchObject({ message: 'spent (2 ahead)' });
    await jest.advanceTimersByTimeAsync(1_000);
    expect(await first).toBeUndefined();
  });

  it('refuseAll rejects every waiter with the given error and leaves the queue empty', async () => {
    const { d } = dispenser({ ratePerSec: 1, burst: 1 });
    expect(d.tokens(1, { consumerId: 'a', weight: 1 }, Date.now() + 5_000)).toBeUndefined();
    const waiting = [1, 2, 3].map(() =>
      outcome(Promise.resolve(d.tokens(1, { consumerId: 'a', weight: 1 }, Date.now() + 5_000))),
    );
    d.refuseAll(() => new GatewayError('UPSTREAM_UNAVAILABLE', { message: 'closing' }));
    expect(d.size).toBe(0);
    for (const r of await Promise.all(waiting)) expect(r).toMatchObject({ code: 'UPSTREAM_UNAVAILABLE' });
  });
});
