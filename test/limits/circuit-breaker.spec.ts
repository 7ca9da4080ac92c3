import {
  BREAKER_PASS,
  BREAKER_REFUSED,
  CircuitBreaker,
  type BreakerState,
} from '../../src/proxy/limits/circuit-breaker.js';

const opts = { failureRatio: 0.5, minSample: 10, windowMs: 10_000, openMs: 5_000 };

describe('circuit breaker', () => {
  const t0 = 9_000_000;

  function failing(b: CircuitBreaker, n: number, at: number): void {
    for (let i = 0; i < n; i++) b.onFailure(at, b.tryAcquire(at));
  }

  it('stays closed below the minimum sample, whatever the ratio', () => {
    const b = new CircuitBreaker(opts);
    failing(b, 9, t0);
    expect(b.state(t0)).toBe('closed');
    expect(b.tryAcquire(t0)).toBe(BREAKER_PASS);
  });

  it('opens when the sample is reached and the failure ratio hits the threshold', () => {
    const b = new CircuitBreaker(opts);
    for (let i = 0; i < 5; i++) b.onSuccess(t0, BREAKER_PASS);
    failing(b, 4, t0);
    expect(b.state(t0)).toBe('closed'); // 4/9
    failing(b, 1, t0);
    expect(b.state(t0)).toBe('open'); // 5/10
    expect(b.tryAcquire(t0 + 1)).toBe(BREAKER_REFUSED);
    expect(b.openRemainingMs(t0 + 1000)).toBe(4000);
  });

  it('does not open on a healthy ratio', () => {
    const b = new CircuitBreaker(opts);
    for (let i = 0; i < 100; i++) {
      if (i % 3 === 0) b.onFailure(t0, BREAKER_PASS);
      else b.onSuccess(t0, BREAKER_PASS);
    }
    expect(b.state(t0)).toBe('closed');
  });

  it('forgets failures older than the window', () => {
    const b = new CircuitBreaker(opts);
    failing(b, 9, t0);
    failing(b, 1, t0 + 11_000);
    expect(b.state(t0 + 11_000)).toBe('closed');
  });

  it('half-open after openMs lets exactly one probe through; success closes it', () => {
    const transitions: string[] = [];
    const b = new CircuitBreaker(opts);
    b.onChange = (from: BreakerState, to: BreakerState) => transitions.push(`${from}>${to}`);
    failing(b, 10, t0);
    const later = t0 + 5_000;
    expect(b.state(later)).toBe('half-open');
    const probe = b.tryAcquire(later);
    expect(probe).toBeGreaterThan(0);
    expect(b.tryAcquire(later)).toBe(BREAKER_REFUSED);
    expect(b.tryAcquire(later + 100)).toBe(BREAKER_REFUSED);
    b.onSuccess(later + 200, probe);
    expect(b.state(later + 200)).toBe('closed');
    expect(b.tryAcquire(later + 200)).toBe(BREAKER_PASS);
    expect(b.window()).toEqual({ calls: 0, failures: 0 });
    expect(transitions).toEqual(['closed>open', 'open>half-open', 'half-open>closed']);
  });

  it('a failed probe opens it again for another openMs', () => {
    const b = new CircuitBreaker(opts);
    failing(b, 10, t0);
    const probe = b.tryAcquire(t0 + 5_000);
    b.onFailure(t0 + 5_100, probe);
    expect(b.state(t0 + 5_100)).toBe('open');
    expect(b.state(t0 + 10_099)).toBe('open');
    expect(b.state(t0 + 10_100)).toBe('half-open');
  });

  it('a probe that never reached the upstream frees the slot for another', () => {
    const b = new CircuitBreaker(opts);
    failing(b, 10, t0);
    const probe = b.tryAcquire(t0 + 5_000);
    b.release(probe);
    expect(b.tryAcquire(t0 + 5_001)).toBeGreaterThan(0);
  });

  it('late outcomes of calls admitted before it opened change nothing', () => {
    const b = new CircuitBreaker(opts);
    failing(b, 10, t0);
    b.onSuccess(t0 + 10, BREAKER_PASS);
    expect(b.state(t0 + 10)).toBe('open');
    const probe = b.tryAcquire(t0 + 5_000);
    b.onFailure(t0 + 5_001, BREAKER_PASS); // an old call, not the probe
    expect(b.state(t0 + 5_001)).toBe('half-open');
    b.onSuccess(t0 + 5_002, probe);
    expect(b.state(t0 + 5_002)).toBe('closed');
  });
});
