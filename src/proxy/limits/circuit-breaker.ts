export type BreakerState = 'closed' | 'open' | 'half-open';

export interface BreakerOptions {
  /** Failures / calls in the window at or above which the breaker opens. */
  readonly failureRatio: number;
  /** Calls the window must hold before the ratio counts. */
  readonly minSample: number;
  readonly windowMs: number;
  /** How long it stays open before one probe is let through. */
  readonly openMs: number;
}

/** Numeric form for the `atrium_upstream_breaker_state` gauge. */
export const BREAKER_STATE_VALUE = { closed: 0, 'half-open': 1, open: 2 } as const satisfies Record<
  BreakerState,
  number
>;

const SLOTS = 10;

/** How an admitted call may proceed: 0 = refused, -1 = normal, else the id of the half-open probe. */
export type BreakerTicket = number;
export const BREAKER_REFUSED = 0;
export const BREAKER_PASS = -1;

/**
 * A per-upstream circuit breaker. Closed: outcomes go into a rolling window (10 slots); once it holds
 * `minSample` calls and the failure ratio reaches `failureRatio`, it opens. Open: every call is refused at
 * once. After `openMs`: half-open, exactly one probe goes through; its success closes the breaker, its
 * failure opens it again. Only breakage counts as failure (5xx, timeouts, connection errors); the caller
 * decides what that is. Pure: the caller passes the time.
 */
export class CircuitBreaker {
  private mode: 'closed' | 'open' = 'closed';
  private openedAt = 0;
  private probe = 0;
  private nextProbeId = 1;
  private halfOpenAnnounced = false;
  private readonly calls = new Array<number>(SLOTS).fill(0);
  private readonly failures = new Array<number>(SLOTS).fill(0);
  private slotEpoch = 0;
  private readonly slotMs: number;
  /** Called on every state change (logs). */
  onChange?: (from: BreakerState, to: BreakerState) => void;

  constructor(private readonly o: BreakerOptions) {
    if (!(o.failureRatio > 0 && o.failureRatio <= 1))
      throw new Error('breaker: failureRatio must be in (0, 1]');
    if (!(o.minSample >= 1)) throw new Error('breaker: minSample must be ≥ 1');
    if (!(o.windowMs > 0) || !(o.openMs > 0)) throw new Error('breaker: windowMs and openMs must be > 0');
    this.slotMs = o.windowMs / SLOTS;
  }

  state(now: number): BreakerState {
    if (this.mode === 'closed') return 'closed';
    return now - this.openedAt >= this.o.openMs ? 'half-open' : 'open';
  }

  /** Milliseconds until the breaker lets a probe through (0 unless open). */
  openRemainingMs(now: number): number {
    return this.mode === 'open' ? Math.max(0, this.openedAt + this.o.openMs - now) : 0;
  }

  tryAcquire(now: number): BreakerTicket {
    const s = this.state(now);
    if (s === 'closed') return BREAKER_PASS;
    if (s === 'open' || this.probe !== 0) return BREAKER_REFUSED;
    if (!this.halfOpenAnnounced) {
      this.halfOpenAnnounced = true;
      this.onChange?.('open', 'half-open');
    }
    this.probe = this.nextProbeId++;
    return this.probe;
  }

  onSuccess(now: number, ticket: BreakerTicket): void {
    if (this.mode === 'open') {
      if (ticket === this.probe && ticket > 0) this.close();
      return;
    }
    this.record(now, false);
  }

  onFailure(now: number, ticket: BreakerTicket): void {
    if (this.mode === 'open') {
      // A failed probe opens it again; late failures of calls admitted before it opened change nothing.
      if (ticket === this.probe && ticket > 0) this.open(now, 'half-open');
      return;
    }
    this.record(now, true);
    const { calls, failures } = this.window();
    if (calls >= this.o.minSample && failures / calls >= this.o.failureRatio) this.open(now, 'closed');
  }

  /** The call ended without telling anything about the upstream's health (e.g. it never reached it). */
  release(ticket: BreakerTicket): void {
    if (ticket > 0 && ticket === this.probe) this.probe = 0;
  }

  /** Calls and failures in the current window (readiness, tests). */
  window(now?: number): { calls: number; failures: number } {
    if (now !== undefined) this.advance(now);
    let calls = 0;
    let failures = 0;
    for (let i = 0; i < SLOTS; i++) {
      calls += this.calls[i];
      failures += this.failures[i];
    }
    return { calls, failures };
  }

  private open(now: number, from: BreakerState): void {
    this.mode = 'open';
    this.openedAt = now;
    this.probe = 0;
    this.halfOpenAnnounced = false;
    this.onChange?.(from, 'open');
  }

  private close(): void {
    this.mode = 'closed';
    this.probe = 0;
    this.calls.fill(0);
    this.failures.fill(0);
    this.onChange?.('half-open', 'closed');
  }

  private record(now: number, failed: boolean): void {
    this.advance(now);
    const i = this.slotEpoch % SLOTS;
    this.calls[i]++;
    if (failed) this.failures[i]++;
  }

  private advance(now: number): void {
    const epoch = Math.floor(now / this.slotMs);
    if (epoch <= this.slotEpoch) return;
    const steps = Math.min(SLOTS, epoch - this.slotEpoch);
    for (let k = 1; k <= steps; k++) {
      const i = (this.slotEpoch + k) % SLOTS;
      this.calls[i] = 0;
      this.failures[i] = 0;
    }
    this.slotEpoch = epoch;
  }
}
