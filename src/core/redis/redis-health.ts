import { SYSTEM_CLOCK, type Clock, type ClockTimer } from '../time/clock.js';

export interface RedisHealthOptions {
  /** Logs one line per transition (down, back). */
  readonly log: (level: 'warn' | 'log', message: string) => void;
  /** Counts every failed Redis operation. */
  readonly onError: () => void;
  /** A cheap round trip through every client the store uses; throws while Redis is unusable. */
  readonly probe: () => Promise<void>;
  /** How often a down Redis is probed. */
  readonly probeIntervalMs: number;
  readonly clock?: Clock;
  /** Called once Redis is usable again (after the probe and its replays). */
  readonly onBack?: () => void;
}

/** Consecutive timeouts (with the connection still up) that count as Redis being down. */
const SOFT_FAILURES_TO_TRIP = 3;

/** A Redis reply that did not come in time (the connection itself may be fine). */
export class RedisTimeoutError extends Error {
  constructor(ms: number) {
    super(`Redis did not answer within ${ms} ms`);
    this.name = 'RedisTimeoutError';
  }
}

function isTimeout(err: unknown): boolean {
  return (
    err instanceof RedisTimeoutError ||
    (err instanceof Error && /timeout|timed out/i.test(err.name + err.message))
  );
}

/**
 * Whether the cache may use Redis right now. A lost connection trips it at once; timeouts trip it after a few
 * in a row (one slow reply should cost one request its cache, not the whole process). While tripped, requests
 * do not touch Redis at all and a background probe checks it until it answers again. Transitions are logged
 * once each; every failure is counted.
 */
export class RedisHealth {
  private up = true;
  private softFailures = 0;
  private probing?: ClockTimer;
  private closed = false;
  private readonly clock: Clock;

  constructor(private readonly opts: RedisHealthOptions) {
    this.clock = opts.clock ?? SYSTEM_CLOCK;
  }

  get available(): boolean {
    return this.up;
  }

  /** Called after a successful round trip. */
  succeeded(): void {
    this.softFailures = 0;
  }

  /** `hard`: switch Redis off now even for a timeout (e.g. an invalidation that must not be lost). */
  failed(err: unknown, hard = false): void {
    this.opts.onError();
    if (!this.up || this.closed) return;
    if (!hard && isTimeout(err) && ++this.softFailures < SOFT_FAILURES_TO_TRIP) return;
    this.softFailures = 0;
    this.up = false;
    this.opts.log(
      'warn',
      `Redis unavailable for the response cache (${describe(err)}); serving from the upstream until it returns`,
    );
    this.scheduleProbe();
  }

  /** Starts in the down state (e.g. Redis did not answer at boot) without counting an error. */
  startDown(err: unknown): void {
    if (!this.up) return;
    this.up = false;
    this.opts.log('warn', `Redis unavailable for the response cache at start (${describe(err)})`);
    this.scheduleProbe();
  }

  close(): void {
    this.closed = true;
    if (this.probing) this.clock.clearTimeout(this.probing);
  }

  private scheduleProbe(): void {
    if (this.closed || this.probing) return;
    this.probing = this.clock.setTimeout(() => {
      this.probing = undefined;
      this.opts.probe().then(
        () => {
          if (this.closed) return;
          this.up = true;
          this.opts.onBack?.();
          this.opts.log('log', 'Redis is back for the response cache');
        },
        () => this.scheduleProbe(),
      );
    }, this.opts.probeIntervalMs);
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
