import { GatewayError } from '../../src/core/errors/gateway-error.js';
import { boundedRetryAfter, decideLocalCooldown } from '../../src/proxy/limits/cooldown.policy.js';
import type { CooldownState } from '../../src/proxy/limits/limiter-state.js';

const settings = { defaultSeconds: 2, maxSeconds: 7 };
const NOW = 1_000_000;
const idle = (): CooldownState => ({ until: 0, streak: 0, streakUntil: 0 });

describe('cooldown policy (pure decisions on the cooldown state)', () => {
  it('caps a vendor Retry-After at the configured maximum and keeps an absent one absent', () => {
    const e = (s?: number) => new GatewayError('UPSTREAM_RATE_LIMITED', { retryAfterSeconds: s });
    expect(boundedRetryAfter(e(3), settings)).toBe(3);
    expect(boundedRetryAfter(e(999_999_999), settings)).toBe(7);
    expect(boundedRetryAfter(e(), settings)).toBeUndefined();
  });

  it('starts a cooldown of the vendor reset when given, and resets the streak', () => {
    const c = { until: 0, streak: 2, streakUntil: NOW + 5_000 };
    expect(decideLocalCooldown(c, 4, NOW, settings)).toEqual({
      kind: 'start',
      ms: 4_000,
      streak: 0,
      streakUntil: 0,
    });
  });

  it('doubles the default for header-less 429s in a row, up to the maximum, and forgets the streak later', () => {
    const c = idle();
    const seen: number[] = [];
    let now = NOW;
    for (let i = 0; i < 4; i++) {
      const d = decideLocalCooldown(c, undefined, now, settings);
      if (d.kind !== 'start') throw new Error(`expected a new cooldown, got ${d.kind}`);
      seen.push(d.ms);
      Object.assign(c, { until: now + d.ms, streak: d.streak, streakUntil: d.streakUntil });
      now = c.until + 1; // the next 429 comes right after this cooldown ends
    }
    expect(seen).toEqual([2_000, 4_000, 7_000, 7_000]);
    // Long after the streak window: back to the default.
    const later = decideLocalCooldown(c, undefined, c.streakUntil + 1, settings);
    expect(later).toMatchObject({ kind: 'start', ms: 2_000, streak: 0 });
  });

  it('keeps a running cooldown unless the vendor asks for longer, which extends it', () => {
    const c = { until: NOW + 3_000, streak: 0, streakUntil: NOW + 6_000 };
    expect(decideLocalCooldown(c, undefined, NOW, settings)).toEqual({ kind: 'keep', ms: 3_000 });
    expect(decideLocalCooldown(c, 2, NOW, settings)).toEqual({ kind: 'keep', ms: 3_000 });
    expect(decideLocalCooldown(c, 5, NOW, settings)).toEqual({ kind: 'extend', ms: 5_000 });
  });
});
