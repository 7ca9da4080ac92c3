import {
  backgroundLoad,
  hostSteadiness,
  QUIET_LIMIT_CORES,
  STEADY_LIMIT,
  steadinessLine,
} from '../../bench/lib/quiet.js';

describe('bench: background load (publish only quiet runs)', () => {
  it('weights each run by its wall time and keeps the busiest', () => {
    const b = backgroundLoad([
      { otherLoadCores: 0.1, wallS: 6 },
      { otherLoadCores: 0.7, wallS: 2 },
    ]);
    expect(b).toEqual({
      meanOtherCores: 0.25,
      maxOtherCores: 0.7,
      limitCores: QUIET_LIMIT_CORES,
      quiet: true,
    });
  });

  it('refuses a run where others kept more than 0.3 of a core busy on average', () => {
    expect(backgroundLoad([{ otherLoadCores: 0.4, wallS: 6 }]).quiet).toBe(false);
    expect(backgroundLoad([{ otherLoadCores: 0.3, wallS: 6 }]).quiet).toBe(true);
    expect(backgroundLoad([{ otherLoadCores: 1.5, wallS: 6 }], 2).quiet).toBe(true);
  });

  it('calls an empty run quiet (nothing measured, nothing to publish over)', () => {
    expect(backgroundLoad([])).toMatchObject({ meanOtherCores: 0, quiet: true });
  });
});

describe('bench: host steadiness (the ceiling round by round)', () => {
  it('is steady while the ceiling moves by at most a quarter', () => {
    const s = hostSteadiness([32.2, 38.5, 39.2]);
    expect(s).toEqual({ minUs: 32.2, maxUs: 39.2, spread: 1.22, limit: STEADY_LIMIT, steady: true });
    expect(steadinessLine(s!)).toBe(
      "the ceiling's CPU per request held at 32.2–39.2 µs (1.22 ×; limit 1.25 ×) across rounds: a steady host",
    );
  });

  it('says so loudly when the host slowed between rounds', () => {
    const s = hostSteadiness([21.4, 43.6, 26.1]);
    expect(s).toMatchObject({ spread: 2.04, steady: false });
    expect(steadinessLine(s!)).toMatch(/^UNSTEADY HOST: the ceiling's CPU per request moved 21\.4–43\.6 µs/);
    expect(hostSteadiness([30, 40], 1.5)?.steady).toBe(true);
  });

  it('has nothing to say about fewer than two rounds', () => {
    expect(hostSteadiness([30])).toBeUndefined();
    expect(hostSteadiness([0, Number.NaN, 25])).toBeUndefined();
  });
});
