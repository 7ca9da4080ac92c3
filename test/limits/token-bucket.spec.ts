import { TokenBucket } from '../../src/proxy/limits/token-bucket.js';

describe('TokenBucket', () => {
  const t0 = 1_000_000;

  it('starts full and allows a burst of exactly `burst`, then nothing', () => {
    const b = new TokenBucket(10, 5, t0);
    for (let i = 0; i < 5; i++) expect(b.take(1, 1, t0).granted).toBe(1);
    const r = b.take(1, 1, t0);
    expect(r.granted).toBe(0);
    expect(r.waitMs).toBe(100); // one token at 10/s
  });

  it('refills at `rate` per second and never above `burst`', () => {
    const b = new TokenBucket(10, 5, t0, 0);
    expect(b.available(t0 + 250)).toBeCloseTo(2.5);
    expect(b.take(1, 1, t0 + 250).granted).toBe(1);
    expect(b.available(t0 + 250)).toBeCloseTo(1.5);
    expect(b.available(t0 + 60_000)).toBe(5);
  });

  it('grants between min and want whole tokens', () => {
    const b = new TokenBucket(10, 8, t0, 3.7);
    expect(b.take(5, 1, t0)).toMatchObject({ granted: 3, waitMs: 0 });
    expect(b.available(t0)).toBeCloseTo(0.7);
    expect(b.take(5, 2, t0)).toMatchObject({ granted: 0, waitMs: 130 });
  });

  it('counts exactly rate × t + burst grants over a long run', () => {
    const b = new TokenBucket(20, 10, t0);
    let granted = 0;
    for (let t = t0; t <= t0 + 10_000; t += 5) granted += b.take(1, 1, t).granted;
    expect(granted).toBe(20 * 10 + 10);
  });

  it('drain empties it and refilling starts at the given time', () => {
    const b = new TokenBucket(10, 5, t0);
    b.drain(t0 + 5000);
    expect(b.take(1, 1, t0 + 1000)).toMatchObject({ granted: 0, waitMs: 4000 + 100 });
    expect(b.available(t0 + 5000)).toBe(0);
    expect(b.available(t0 + 5300)).toBeCloseTo(3);
  });

  it('setRate keeps earned tokens and changes the refill from then on', () => {
    const b = new TokenBucket(10, 10, t0, 0);
    b.setRate(2, t0 + 500); // 5 tokens earned at 10/s
    expect(b.available(t0 + 1000)).toBeCloseTo(6);
  });

  it('rejects nonsense when built', () => {
    expect(() => new TokenBucket(0, 5, t0)).toThrow('rate');
    expect(() => new TokenBucket(1, 0, t0)).toThrow('burst');
  });
});
