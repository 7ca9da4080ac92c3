import { fullJitterDelayMs } from '../../src/proxy/limits/backoff.js';

describe('full-jitter exponential backoff', () => {
  it('stays within [0, min(cap, base·2^(n-1)))', () => {
    for (let attempt = 1; attempt <= 8; attempt++) {
      const ceiling = Math.min(2000, 100 * 2 ** (attempt - 1));
      expect(fullJitterDelayMs(attempt, 100, 2000, () => 0)).toBe(0);
      expect(fullJitterDelayMs(attempt, 100, 2000, () => 0.999999)).toBe(ceiling - 1);
      for (let i = 0; i < 200; i++) {
        const d = fullJitterDelayMs(attempt, 100, 2000);
        expect(d).toBeGreaterThanOrEqual(0);
        expect(d).toBeLessThan(ceiling);
      }
    }
  });

  it('doubles the ceiling per attempt until the cap', () => {
    const half = (n: number) => fullJitterDelayMs(n, 100, 1000, () => 0.5);
    expect([1, 2, 3, 4, 5, 6].map(half)).toEqual([50, 100, 200, 400, 500, 500]);
  });

  it('is actually jittered (not a constant)', () => {
    const seen = new Set<number>();
    for (let i = 0; i < 50; i++) seen.add(fullJitterDelayMs(3, 100, 2000));
    expect(seen.size).toBeGreaterThan(10);
  });
});
