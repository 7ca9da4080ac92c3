import { backgroundLoad, QUIET_LIMIT_CORES } from '../../bench/lib/quiet.js';

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
