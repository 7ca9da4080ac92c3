import { AimdRate, type AimdOptions } from '../../src/proxy/limits/aimd.js';

const opts: AimdOptions = {
  enabled: true,
  configured: 10,
  minRate: 1,
  maxRate: 10,
  decrease: 0.5,
  increasePerSec: 0.5,
};

describe('AIMD learned rate', () => {
  const t0 = 5_000_000;

  it('starts at the configured rate and halves on each 429, never below the minimum', () => {
    const a = new AimdRate(opts, t0);
    expect(a.rate).toBe(10);
    expect(a.onThrottled(t0)).toBe(5);
    expect(a.onThrottled(t0)).toBe(2.5);
    expect(a.onThrottled(t0)).toBe(1.25);
    expect(a.onThrottled(t0)).toBe(1);
    expect(a.onThrottled(t0)).toBe(1);
  });

  it('grows additively with time of successful calls, never above the maximum', () => {
    const a = new AimdRate(opts, t0);
    a.onThrottled(t0); // 5
    let t = t0;
    for (let i = 0; i < 4; i++) a.onSuccess((t += 1000));
    expect(a.rate).toBeCloseTo(7);
    for (let i = 0; i < 100; i++) a.onSuccess((t += 1000));
    expect(a.rate).toBe(10);
  });

  it('idle time earns at most one second of increase', () => {
    const a = new AimdRate(opts, t0);
    a.onThrottled(t0); // 5
    a.onSuccess(t0 + 3_600_000);
    expect(a.rate).toBeCloseTo(5.5);
  });

  it('adopts the fleet rate within its bounds', () => {
    const a = new AimdRate(opts, t0);
    a.adopt(3);
    expect(a.rate).toBe(3);
    a.adopt(100);
    expect(a.rate).toBe(10);
    a.adopt(0.1);
    expect(a.rate).toBe(1);
    a.adopt(Number.NaN);
    expect(a.rate).toBe(1);
  });

  it('disabled: always the configured rate', () => {
    const a = new AimdRate({ ...opts, enabled: false }, t0);
    a.onThrottled(t0);
    a.onSuccess(t0 + 1000);
    a.adopt(2);
    expect(a.rate).toBe(10);
    expect(a.bounds).toEqual({ min: 10, max: 10 });
  });

  it('rejects inconsistent bounds', () => {
    expect(() => new AimdRate({ ...opts, minRate: 20 }, t0)).toThrow('minRate');
    expect(() => new AimdRate({ ...opts, decrease: 1 }, t0)).toThrow('decrease');
  });
});
