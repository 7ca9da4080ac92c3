/** What a bucket answered: tokens granted now, or how long until `min` tokens will be there. */
export interface BucketTake {
  readonly granted: number;
  readonly waitMs: number;
  /** Tokens left after this take. */
  readonly tokens: number;
}

// Refill arithmetic in floating point: a hair of tolerance so 0.9999999 tokens counts as one.
const EPSILON = 1e-9;

/**
 * A token bucket: `rate` tokens per second up to `burst`. Pure (the caller passes the time), so the
 * algorithm is tested with fake clocks and the same code is the local fallback of the shared bucket.
 */
export class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private rate: number,
    private burst: number,
    now: number,
    initialTokens: number = burst,
  ) {
    if (!(rate > 0)) throw new Error('TokenBucket: rate must be > 0');
    if (!(burst >= 1)) throw new Error('TokenBucket: burst must be ≥ 1');
    this.tokens = Math.min(burst, Math.max(0, initialTokens));
    this.last = now;
  }

  get ratePerSec(): number {
    return this.rate;
  }

  get capacity(): number {
    return this.burst;
  }

  /** Changes the refill rate from now on (tokens earned so far are kept). */
  setRate(rate: number, now: number): void {
    if (!(rate > 0)) throw new Error('TokenBucket: rate must be > 0');
    this.refill(now);
    this.rate = rate;
  }

  /** Tokens available at `now` (no side effect beyond the refill). */
  available(now: number): number {
    this.refill(now);
    return this.tokens;
  }

  /**
   * Takes between `min` and `want` whole tokens if at least `min` are there; else takes nothing and says how
   * long until `min` will be.
   */
  take(want: number, min: number, now: number): BucketTake {
    this.refill(now);
    if (this.tokens + EPSILON >= min) {
      const granted = Math.max(min, Math.min(want, Math.floor(this.tokens + EPSILON)));
      this.tokens = Math.max(0, this.tokens - granted);
      return { granted, waitMs: 0, tokens: this.tokens };
    }
    const waitMs = Math.ceil(((min - this.tokens) * 1000) / this.rate) + Math.max(0, this.last - now);
    return { granted: 0, waitMs, tokens: this.tokens };
  }

  /** Empties the bucket; refilling starts at `until` (after a cooldown, traffic comes back gradually). */
  drain(until: number): void {
    this.tokens = 0;
    this.last = Math.max(this.last, until);
  }

  /** Starts afresh at `now` with `tokens` (an operator lifted a cooldown). */
  reset(now: number, tokens: number): void {
    this.tokens = Math.min(this.burst, Math.max(0, tokens));
    this.last = now;
  }

  private refill(now: number): void {
    if (now <= this.last) return;
    this.tokens = Math.min(this.burst, this.tokens + ((now - this.last) * this.rate) / 1000);
    this.last = now;
  }
}
