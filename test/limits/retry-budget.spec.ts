import { RetryBudget } from '../../src/proxy/limits/retry-budget.js';

describe('retry budget', () => {
  const t0 = 7_000_000;

  it('allows retries up to 20 % of recent calls', () => {
    const b = new RetryBudget({ ratio: 0.2, minPerWindow: 0 });
    for (let i = 0; i < 100; i++) b.recordCall(t0);
    let allowed = 0;
    for (let i = 0; i < 100; i++) if (b.tryRetry(t0)) allowed++;
    expect(allowed).toBe(20);
  });

  it('keeps a small floor so a quiet upstream is still retried', () => {
    const b = new RetryBudget({ ratio: 0.2, minPerWindow: 2 });
    b.recordCall(t0);
    expect(b.tryRetry(t0)).toBe(true);
    expect(b.tryRetry(t0)).toBe(true);
    expect(b.tryRetry(t0)).toBe(false);
  });

  it('forgets calls and retries older than the window', () => {
    const b = new RetryBudget({ ratio: 0.2, windowMs: 10_000, minPerWindow: 0 });
    for (let i = 0; i < 10; i++) b.recordCall(t0);
    expect(b.tryRetry(t0)).toBe(true);
    expect(b.tryRetry(t0)).toBe(true);
    expect(b.tryRetry(t0)).toBe(false);
    // 11 s later the old calls are gone: no budget without new calls.
    expect(b.tryRetry(t0 + 11_000)).toBe(false);
    for (let i = 0; i < 5; i++) b.recordCall(t0 + 11_000);
    expect(b.tryRetry(t0 + 11_000)).toBe(true);
    expect(b.tryRetry(t0 + 11_000)).toBe(false);
  });

  it('during an outage retries add at most the ratio to the load', () => {
    const b = new RetryBudget({ ratio: 0.2 });
    let calls = 0;
    let retries = 0;
    for (let t = t0; t < t0 + 60_000; t += 10) {
      b.recordCall(t);
      calls++;
      // Every call fails and would like two retries.
      for (let k = 0; k < 2; k++) if (b.tryRetry(t)) retries++;
    }
    expect(retries / calls).toBeLessThanOrEqual(0.21);
    expect(retries / calls).toBeGreaterThan(0.15);
  });
});
