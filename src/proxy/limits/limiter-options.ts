import type { AimdOptions } from './aimd.js';
import type { BreakerOptions, BreakerState } from './circuit-breaker.js';
import type { RedisBudgetStore } from './redis-budget.store.js';

export interface UpstreamLimiterOptions {
  readonly upstream: string;
  /** "the macroeconomic data service" (messages). */
  readonly title: string;
  /** Configured budget: requests (tokens) per second and burst. */
  readonly ratePerSec: number;
  readonly burst: number;
  /** Longest wait for a token before 429 UPSTREAM_RATE_LIMITED. */
  readonly maxWaitMs: number;
  /** Share of the budget this replica may spend alone while the shared bucket is unreachable. */
  readonly localShare: number;
  readonly aimd: Omit<AimdOptions, 'configured'>;
  readonly breaker: BreakerOptions;
  /**
   * Cooldown after an upstream 429: `defaultSeconds` without a usable reset header (doubling on repeats),
   * and `maxSeconds`, the longest cooldown of any kind: a vendor's own `Retry-After` is capped at it too.
   */
  readonly cooldown: CooldownSettings;
  /** The largest route cost of this upstream (checked against the burst at start-up). */
  readonly maxCost: number;
}

export interface CooldownSettings {
  readonly defaultSeconds: number;
  readonly maxSeconds: number;
}

export interface LimiterLog {
  log(message: string): void;
  warn(message: string): void;
}

export interface UpstreamLimiterDeps {
  /** The fleet's bucket and cooldown; absent → this replica's own bucket (single instance). */
  readonly shared?: RedisBudgetStore;
  readonly now?: () => number;
  /** Reserved share of a consumer's traffic (0 when none). */
  readonly reservedShareOf?: (consumerId: string) => number;
  /** A Redis call failed and the local fallback answered. */
  readonly onRedisError?: () => void;
  readonly log?: LimiterLog;
  /**
   * This replica's share of the budget while Redis is away: 1 ÷ the replicas last seen alive (the fleet
   * heartbeat); undefined before any was seen, and then `localShare` applies.
   */
  readonly fleetShare?: () => number | undefined;
}

export type BudgetMode = 'local' | 'shared' | 'local-fallback';

/** What `/health/ready` shows per upstream (the operator console reads these names). */
export interface UpstreamLimitFacts {
  breaker: BreakerState;
  cooldownRemainingSeconds: number;
  bucket: { configuredRatePerSec: number; learnedRatePerSec: number; burst: number; tokens: number };
  budget: BudgetMode;
  /** The share of the budget this replica spends alone while Redis is away (`local-fallback`). */
  fallbackShare: number;
  queued: number;
}

export function validateLimiterOptions(o: UpstreamLimiterOptions): void {
  const where = `limits ${o.upstream}`;
  if (!(o.ratePerSec > 0)) throw new Error(`${where}: ratePerSec must be > 0`);
  if (!(o.burst >= 1)) throw new Error(`${where}: burst must be ≥ 1`);
  if (!(o.maxWaitMs >= 0)) throw new Error(`${where}: maxWaitMs must be ≥ 0`);
  if (!(o.localShare > 0 && o.localShare <= 1)) throw new Error(`${where}: localShare must be in (0, 1]`);
  if (!(o.maxCost >= 1) || o.maxCost > o.burst)
    throw new Error(`${where}: a route costs ${o.maxCost} tokens but the burst is ${o.burst}`);
  if (!(o.cooldown.defaultSeconds >= 1) || o.cooldown.maxSeconds < o.cooldown.defaultSeconds)
    throw new Error(`${where}: need 1 ≤ cooldown default ≤ cooldown max`);
}
