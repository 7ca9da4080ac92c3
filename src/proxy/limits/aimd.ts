export interface AimdOptions {
  readonly enabled: boolean;
  /** The configured rate (requests per second): where learning starts. */
  readonly configured: number;
  readonly minRate: number;
  readonly maxRate: number;
  /** Multiplier applied after an upstream 429 (0.5 halves the rate). */
  readonly decrease: number;
  /** Requests per second added per second of successful calls. */
  readonly increasePerSec: number;
}

export function validateAimd(o: AimdOptions): void {
  if (!(o.configured > 0)) throw new Error('AIMD: configured rate must be > 0');
  if (!(o.minRate > 0) || !(o.maxRate >= o.minRate)) throw new Error('AIMD: need 0 < minRate ≤ maxRate');
  if (!(o.decrease > 0 && o.decrease < 1)) throw new Error('AIMD: decrease must be in (0, 1)');
  if (!(o.increasePerSec > 0)) throw new Error('AIMD: increasePerSec must be > 0');
}

/** Successes further apart than this earn no more than this much increase (idle time is not success). */
const MAX_CREDIT_MS = 1000;

/**
 * The learned upstream rate (additive increase, multiplicative decrease), kept within [minRate, maxRate].
 * Disabled → always the configured rate. Pure: the caller passes the time.
 */
export class AimdRate {
  private current: number;
  private lastOkAt: number;

  constructor(
    private readonly o: AimdOptions,
    now: number,
  ) {
    validateAimd(o);
    this.current = o.enabled ? this.clamp(o.configured) : o.configured;
    this.lastOkAt = now;
  }

  get rate(): number {
    return this.current;
  }

  get bounds(): { min: number; max: number } {
    return this.o.enabled
      ? { min: this.o.minRate, max: this.o.maxRate }
      : { min: this.o.configured, max: this.o.configured };
  }

  /** An upstream 429 (once per cooldown, not per refused call in flight). Returns the new rate. */
  onThrottled(now: number): number {
    if (this.o.enabled) this.current = this.clamp(this.current * this.o.decrease);
    this.lastOkAt = now;
    return this.current;
  }

  onSuccess(now: number): number {
    if (!this.o.enabled) return this.current;
    const credit = Math.min(MAX_CREDIT_MS, Math.max(0, now - this.lastOkAt));
    this.lastOkAt = now;
    this.current = this.clamp(this.current + (this.o.increasePerSec * credit) / 1000);
    return this.current;
  }

  /** The fleet's learned rate, read from the shared bucket. */
  adopt(rate: number): void {
    if (this.o.enabled && Number.isFinite(rate) && rate > 0) this.current = this.clamp(rate);
  }

  private clamp(r: number): number {
    return Math.min(this.o.maxRate, Math.max(this.o.minRate, r));
  }
}
