import type { BudgetMode, LimiterLog } from './limiter-options.js';
import type { UpstreamLimitState } from './limiter-state.js';
import type { RedisBudgetStore } from './redis-budget.store.js';
import type { BucketTake } from './token-bucket.js';

/** What one take from the budget answered. */
export interface Take {
  granted: number;
  waitMs: number;
  /** > 0: the fleet is cooling down for that long. */
  cooldownMs: number;
  rate?: number;
}

export interface BudgetSourceOptions {
  readonly name: string;
  readonly localShare: number;
  readonly burst: number;
  /** The fleet's bucket; absent → the local bucket is the whole budget. */
  readonly shared?: RedisBudgetStore;
  readonly now: () => number;
  readonly onRedisError?: () => void;
  readonly log?: LimiterLog;
  /** 1 ÷ the replicas last seen alive; undefined → `localShare`. */
  readonly fleetShare?: () => number | undefined;
}

/** Failed takes in a row on a connected Redis before the local fallback bucket is used. */
const SLOW_TAKES_BEFORE_FALLBACK = 3;

/**
 * Which bucket answers a take: the fleet's shared one (one atomic Redis script per grant) or the local one
 * (the whole budget alone, or only this replica's share while Redis is unreachable — never unlimited). Keeps
 * the learned rate in step with what the fleet answers.
 */
export class BudgetSource {
  constructor(
    private readonly state: UpstreamLimitState,
    private readonly o: BudgetSourceOptions,
  ) {}

  get shared(): RedisBudgetStore | undefined {
    return this.o.shared;
  }

  /** What this replica spends alone while Redis is away: the budget ÷ the replicas last seen alive. */
  get fallbackShare(): number {
    return this.o.fleetShare?.() ?? this.o.localShare;
  }

  get mode(): BudgetMode {
    if (!this.o.shared) return 'local';
    return this.state.shared.failing || !this.o.shared.ready ? 'local-fallback' : 'shared';
  }

  /** The local bucket answers synchronously; undefined when the shared bucket is the one to ask. */
  tryLocal(cost: number, now: number): BucketTake | undefined {
    return this.mode === 'shared' ? undefined : this.state.bucket.take(cost, cost, now);
  }

  async take(want: number, min: number): Promise<Take> {
    const shared = this.o.shared;
    if (shared) {
      if (shared.ready) {
        try {
          const r = await shared.take(want, min, this.state.shared.lastCallOk);
          this.state.shared.slowTakes = 0;
          this.onSharedAnswer(r.tokens, r.rate);
          if (r.granted < 0) return { granted: 0, waitMs: 0, cooldownMs: r.waitMs, rate: r.rate };
          return { granted: r.granted, waitMs: r.waitMs, cooldownMs: 0 };
        } catch (e) {
          // Connected but slow: the fleet may be cooling down or out of tokens. Ask again shortly rather
          // than spend local tokens, unless it keeps failing.
          if (++this.state.shared.slowTakes < SLOW_TAKES_BEFORE_FALLBACK) {
            this.o.onRedisError?.();
            return { granted: 0, waitMs: 20, cooldownMs: 0 };
          }
          this.onSharedError(e as Error);
        }
      } else this.onSharedError(new Error(`Redis is ${shared.redis.status}`));
    }
    const r = this.state.bucket.take(want, min, this.o.now());
    return { granted: r.granted, waitMs: r.waitMs, cooldownMs: 0 };
  }

  onSharedAnswer(tokens: number, rate: number): void {
    const s = this.state.shared;
    s.last = { tokens, rate, at: this.o.now() };
    this.state.aimd.adopt(rate);
    if (s.failing) {
      s.failing = false;
      this.o.log?.log(`${this.o.name}: Redis answers again; back on the fleet's shared budget`);
    }
  }

  onSharedError(e: Error): void {
    this.o.onRedisError?.();
    if (!this.state.shared.failing) {
      this.state.shared.failing = true;
      const share = this.fallbackShare;
      const now = this.o.now();
      // The fleet's bucket may have just been spent: the share starts empty and refills at its rate, so the
      // fleet's calls across the switch stay within the budget (a full local burst per replica would not).
      this.state.bucket.reset(now, 0);
      this.state.bucket.setRate(this.state.aimd.rate * share, now);
      this.o.log?.warn(
        `${this.o.name}: shared budget unavailable (${e.message}); spending this replica's ${Math.round(share * 100)} % share locally`,
      );
    }
  }

  /** The local bucket follows the learned rate: all of it alone, this replica's share in a fleet. */
  syncBucketRate(now: number): void {
    const rate = this.state.aimd.rate;
    this.state.bucket.setRate(this.o.shared ? rate * this.fallbackShare : rate, now);
  }

  /** The rate requests are served at right now (for the `Retry-After` of a spent budget). */
  effectiveRate(): number {
    const rate = this.state.aimd.rate;
    return this.mode === 'local-fallback' ? rate * this.fallbackShare : rate;
  }

  /** Tokens left: the last shared answer refilled since (shared), else the local bucket's. */
  tokensLeft(now: number): number {
    const last = this.state.shared.last;
    if (this.mode === 'shared' && last) {
      if (this.state.cooldown.until > now) return 0;
      return Math.min(this.o.burst, last.tokens + (Math.max(0, now - last.at) * last.rate) / 1000);
    }
    return this.state.bucket.available(now);
  }
}
