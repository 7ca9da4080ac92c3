export interface RetryBudgetOptions {
  /** Retries allowed as a fraction of the calls in the window (0.2 = 20 %). */
  readonly ratio: number;
  readonly windowMs?: number;
  /** Retries always allowed per window, so a quiet upstream's rare blip is still retried. */
  readonly minPerWindow?: number;
}

const SLOTS = 10;

/**
 * Retries may add at most `ratio` of the recent calls to one upstream (plus a small floor), so that during
 * an outage retries cannot multiply the load (the gRPC/Finagle retry budget). A rolling window of 10 slots.
 * Pure: the caller passes the time.
 */
export class RetryBudget {
  private readonly calls = new Array<number>(SLOTS).fill(0);
  private readonly retries = new Array<number>(SLOTS).fill(0);
  private epoch = 0;
  private readonly slotMs: number;
  private readonly minPerWindow: number;

  constructor(private readonly o: RetryBudgetOptions) {
    if (!(o.ratio >= 0 && o.ratio <= 1)) throw new Error('RetryBudget: ratio must be in [0, 1]');
    const windowMs = o.windowMs ?? 10_000;
    if (!(windowMs > 0)) throw new Error('RetryBudget: windowMs must be > 0');
    this.slotMs = windowMs / SLOTS;
    this.minPerWindow = o.minPerWindow ?? 2;
  }

  /** Every first attempt to the upstream. */
  recordCall(now: number): void {
    this.advance(now);
    this.calls[this.epoch % SLOTS]++;
  }

  /** Spends a retry if the budget allows one. */
  tryRetry(now: number): boolean {
    this.advance(now);
    let calls = 0;
    let retries = 0;
    for (let i = 0; i < SLOTS; i++) {
      calls += this.calls[i];
      retries += this.retries[i];
    }
    if (retries >= Math.max(this.minPerWindow, this.o.ratio * calls)) return false;
    this.retries[this.epoch % SLOTS]++;
    return true;
  }

  private advance(now: number): void {
    const epoch = Math.floor(now / this.slotMs);
    if (epoch <= this.epoch) return;
    const steps = Math.min(SLOTS, epoch - this.epoch);
    for (let k = 1; k <= steps; k++) {
      const i = (this.epoch + k) % SLOTS;
      this.calls[i] = 0;
      this.retries[i] = 0;
    }
    this.epoch = epoch;
  }
}
