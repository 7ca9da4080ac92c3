export interface RedisHealthOptions {
  /** Logs one line per transition (down, back). */
  readonly log: (level: 'warn' | 'log', message: string) => void;
  /** Counts every failed Redis operation. */
  readonly onError: () => void;
  /** A cheap round trip through every client the store uses; throws while Redis is unusable. */
  readonly probe: () => Promise<void>;
  /** How often a down Redis is probed. */
  readonly probeIntervalMs: number;
}

/**
 * Whether the cache may use Redis right now. After a failure, requests stop touching Redis (no per-request
 * timeouts while it is down) and a background probe checks it until it answers again. Transitions are logged
 * once each; every failure is counted.
 */
export class RedisHealth {
  private up = true;
  private probing?: NodeJS.Timeout;
  private closed = false;

  constructor(private readonly opts: RedisHealthOptions) {}

  get available(): boolean {
    return this.up;
  }

  failed(err: unknown): void {
    this.opts.onError();
    if (!this.up || this.closed) return;
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
    if (this.probing) clearTimeout(this.probing);
  }

  private scheduleProbe(): void {
    if (this.closed || this.probing) return;
    this.probing = setTimeout(() => {
      this.probing = undefined;
      this.opts.probe().then(
        () => {
          if (this.closed) return;
          this.up = true;
          this.opts.log('log', 'Redis is back for the response cache');
        },
        () => this.scheduleProbe(),
      );
    }, this.opts.probeIntervalMs);
    this.probing.unref();
  }
}

function describe(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
