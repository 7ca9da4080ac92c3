import { AimdRate } from './aimd.js';
import { CircuitBreaker } from './circuit-breaker.js';
import type { UpstreamLimiterOptions } from './limiter-options.js';
import { TokenBucket } from './token-bucket.js';

/** Where this replica believes the upstream's cooldown stands. */
export interface CooldownState {
  /** Epoch ms the cooldown ends (0 or past: none). */
  until: number;
  /** Header-less 429s in a row: the default cooldown doubles with each. */
  streak: number;
  /** The streak counts on while a new 429 comes before this time. */
  streakUntil: number;
}

/** How the fleet's shared budget (Redis) has been answering this replica. */
export interface SharedBudgetHealth {
  /** Unreachable: the local bucket holds this replica's share meanwhile. */
  failing: boolean;
  /** Takes in a row that failed on a connected Redis. */
  slowTakes: number;
  /** The last answer (for the token estimate in `/health/ready`). */
  last?: { tokens: number; rate: number; at: number };
  /** Whether the last settled call succeeded (the shared AIMD increases only then). */
  lastCallOk: boolean;
}

/**
 * The mutable state of one upstream's limiter, in one place and without decisions: the policies
 * (cooldown.policy.ts, budget-source.ts, token-dispenser.ts, upstream-limiter.ts) read and update it.
 * The breaker, AIMD rate and bucket are small algorithms of their own, owned here per upstream.
 */
export class UpstreamLimitState {
  readonly breaker: CircuitBreaker;
  readonly aimd: AimdRate;
  /** The local bucket: the whole budget (single instance) or this replica's share (fallback). */
  readonly bucket: TokenBucket;
  readonly cooldown: CooldownState = { until: 0, streak: 0, streakUntil: 0 };
  readonly shared: SharedBudgetHealth = { failing: false, slowTakes: 0, lastCallOk: true };

  constructor(o: UpstreamLimiterOptions, fleetShared: boolean, now: number) {
    this.aimd = new AimdRate({ ...o.aimd, configured: o.ratePerSec }, now);
    this.breaker = new CircuitBreaker(o.breaker);
    const fallbackBurst = Math.max(o.maxCost, Math.round(o.burst * o.localShare));
    this.bucket = fleetShared
      ? new TokenBucket(this.aimd.rate * o.localShare, fallbackBurst, now)
      : new TokenBucket(this.aimd.rate, o.burst, now);
  }

  cooldownRemainingMs(now: number): number {
    return Math.max(0, this.cooldown.until - now);
  }
}
