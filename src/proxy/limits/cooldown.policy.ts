import type { GatewayError } from '../../core/errors/gateway-error.js';
import type { CooldownSettings } from './limiter-options.js';
import type { CooldownState } from './limiter-state.js';

/**
 * The vendor's own `Retry-After` in seconds, bounded by the configured maximum: an absurd header
 * (`Retry-After: 999999999`, a date years ahead) must not shut the upstream for long.
 */
export function boundedRetryAfter(err: GatewayError, s: CooldownSettings): number | undefined {
  return err.retryAfterSeconds === undefined ? undefined : Math.min(err.retryAfterSeconds, s.maxSeconds);
}

/** What a 429 handled by this replica alone (no shared state) does to the cooldown. */
export type LocalCooldownDecision =
  /** A cooldown already runs at least as long as the vendor asks: keep it. */
  | { readonly kind: 'keep'; readonly ms: number }
  /** A cooldown runs but the vendor asks for longer: extend it (the learned rate already dropped). */
  | { readonly kind: 'extend'; readonly ms: number }
  /** A new cooldown: lower the learned rate; `streak` is the state to keep for the next header-less 429. */
  | {
      readonly kind: 'start';
      readonly ms: number;
      readonly streak: number;
      readonly streakUntil: number;
    };

/**
 * The vendor's reset when it gave one; otherwise the default, doubling for each header-less 429 that comes
 * within twice the previous cooldown, up to the maximum. Pure: reads the state, returns the decision.
 */
export function decideLocalCooldown(
  c: CooldownState,
  header: number | undefined,
  now: number,
  s: CooldownSettings,
): LocalCooldownDecision {
  const remaining = c.until - now;
  if (remaining > 0) {
    if (header === undefined || header * 1000 <= remaining) return { kind: 'keep', ms: remaining };
    return { kind: 'extend', ms: header * 1000 };
  }
  if (header !== undefined) return { kind: 'start', ms: header * 1000, streak: 0, streakUntil: 0 };
  const streak = now < c.streakUntil ? c.streak + 1 : 0;
  const seconds = Math.min(s.maxSeconds, s.defaultSeconds * 2 ** streak);
  return { kind: 'start', ms: seconds * 1000, streak, streakUntil: now + seconds * 2000 };
}
