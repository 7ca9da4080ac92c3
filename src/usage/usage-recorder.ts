import { Counter, type Registry } from 'prom-client';
import type { Clock, ClockTimer } from '../core/time/clock.js';
import {
  COUNTER_COUNT,
  dayOf,
  daysBetween,
  nextDayStart,
  USAGE_COUNTERS,
  USAGE_COUNTER_NAMES,
  type UsageCounts,
} from './usage-counters.js';
import type { UsageDelta, UsageStore, UsageStoreKind } from './usage-store.js';

/** Counts of one consumer on one upstream since the last flush, and its pre-bound metric series. */
export class UsageCell {
  readonly counts = new Float64Array(COUNTER_COUNT);
  dirty = false;

  constructor(
    readonly consumer: string,
    readonly upstream: string,
    readonly series: ReadonlyArray<Counter.Internal | undefined>,
  ) {}
}

export interface UsageRecorderOptions {
  readonly store: UsageStore;
  readonly clock: Clock;
  /** Registry of the `atrium_consumer_*` counters; absent → no metrics (unit tests). */
  readonly registry?: Registry;
  /** How often counts go to a shared store (database, Redis); 0 → only when read or at shutdown (memory). */
  readonly flushEveryMs: number;
  readonly onFlushError?: (err: unknown) => void;
}

export interface UsageQuery {
  readonly fromMs: number;
  readonly toMs: number;
  readonly consumer?: string;
  readonly upstream?: string;
}

export type UsageRow = { day: string; consumer: string; upstream: string } & UsageCounts;

export interface UsageReport {
  from: string;
  to: string;
  store: UsageStoreKind;
  rows: UsageRow[];
  totals: UsageCounts;
}

/**
 * Vendor usage per consumer, upstream and UTC day. The hot path adds to a pre-bound cell (two Map lookups,
 * one array slot, one metric series, no allocation after the pair's first request) and never waits on
 * Redis: counts are flushed in one pipelined round trip a second (Redis) or kept here (memory). A failed
 * flush keeps its counts for the next one, so an outage delays figures instead of losing them.
 */
export class UsageRecorder {
  private readonly cells = new Map<string, Map<string, UsageCell>>();
  private readonly dirtyCells: UsageCell[] = [];
  private unsent = new Map<string, UsageDelta>();
  private readonly metrics?: Array<Counter | undefined>;
  private day: string;
  private dayEnd: number;
  private flushing: Promise<void> = Promise.resolve();
  private timer?: ClockTimer;
  private closed = false;

  constructor(private readonly opts: UsageRecorderOptions) {
    const now = opts.clock.now();
    this.day = dayOf(now);
    this.dayEnd = nextDayStart(now);
    if (opts.registry) {
      const registry = opts.registry;
      this.metrics = USAGE_COUNTERS.map((c) =>
        c.metric
          ? new Counter({
              name: c.metric,
              help: c.help,
              labelNames: ['consumer', 'upstream'],
              registers: [registry],
            })
          : undefined,
      );
    }
    if (opts.flushEveryMs > 0) this.schedule();
  }

  get storeKind(): UsageStoreKind {
    return this.opts.store.kind;
  }

  /** The cell of a consumer on an upstream (created, with its metric series at zero, on first use). */
  cell(consumer: string, upstream: string): UsageCell {
    let byUpstream = this.cells.get(consumer);
    if (byUpstream === undefined) this.cells.set(consumer, (byUpstream = new Map<string, UsageCell>()));
    let cell = byUpstream.get(upstream);
    if (cell === undefined) {
      // `inc(0)` creates the series, so a consumer's figures are exported from its first request on.
      const series =
        this.metrics?.map((m) => {
          const child = m?.labels(consumer, upstream);
          child?.inc(0);
          return child;
        }) ?? [];
      cell = new UsageCell(consumer, upstream, series);
      byUpstream.set(upstream, cell);
    }
    return cell;
  }

  /** Counts one event (a USAGE_COUNTERS position) for a cell. */
  add(cell: UsageCell, index: number): void {
    const now = this.opts.clock.now();
    if (now >= this.dayEnd) this.rollover(now);
    cell.counts[index]++;
    cell.series[index]?.inc();
    if (!cell.dirty) {
      cell.dirty = true;
      this.dirtyCells.push(cell);
    }
  }

  count(consumer: string, upstream: string, index: number): void {
    this.add(this.cell(consumer, upstream), index);
  }

  /** Moves every cell's counts (of the current day) to the unsent deltas. */
  private take(): void {
    for (const cell of this.dirtyCells) {
      const key = `${this.day}|${cell.consumer}|${cell.upstream}`;
      let d = this.unsent.get(key);
      if (!d) {
        d = {
          day: this.day,
          consumer: cell.consumer,
          upstream: cell.upstream,
          counts: new Float64Array(COUNTER_COUNT),
        };
        this.unsent.set(key, d);
      }
      for (let i = 0; i < COUNTER_COUNT; i++) d.counts[i] += cell.counts[i];
      cell.counts.fill(0);
      cell.dirty = false;
    }
    this.dirtyCells.length = 0;
  }

  /** Midnight (UTC) passed: what was counted so far belongs to the day that ended. */
  private rollover(now: number): void {
    this.take();
    this.day = dayOf(now);
    this.dayEnd = nextDayStart(now);
  }

  /** Sends what was counted to the store; flushes run one after another, so a read after one sees all. */
  flush(): Promise<void> {
    const run = this.flushing.then(() => this.flushOnce());
    this.flushing = run.catch(() => undefined);
    return run;
  }

  private async flushOnce(): Promise<void> {
    const now = this.opts.clock.now();
    if (now >= this.dayEnd) this.rollover(now);
    this.take();
    // A buffering store is called even with nothing new: it resends what waits in it.
    if (this.unsent.size === 0 && !this.opts.store.buffers) return;
    const batch = this.unsent;
    this.unsent = new Map();
    try {
      await this.opts.store.add([...batch.values()]);
    } catch (err) {
      // A buffering store keeps them itself (resent as they were); otherwise kept here for the next flush,
      // merged with anything counted meanwhile.
      if (this.opts.store.buffers) throw err;
      for (const [key, d] of batch) {
        const cur = this.unsent.get(key);
        if (cur) for (let i = 0; i < COUNTER_COUNT; i++) cur.counts[i] += d.counts[i];
        else this.unsent.set(key, d);
      }
      throw err;
    }
  }

  private schedule(): void {
    if (this.closed) return;
    this.timer = this.opts.clock.setTimeout(() => {
      this.flush()
        .catch((err: unknown) => this.opts.onFlushError?.(err))
        .finally(() => this.schedule());
    }, this.opts.flushEveryMs);
  }

  /** Figures per day, consumer and upstream between two UTC days (inclusive), everything counted included. */
  async report(q: UsageQuery): Promise<UsageReport> {
    await this.flush();
    const days = daysBetween(q.fromMs, q.toMs);
    const deltas = await this.opts.store.read(days, { consumer: q.consumer, upstream: q.upstream });
    const totals = Object.fromEntries(USAGE_COUNTER_NAMES.map((n) => [n, 0])) as UsageCounts;
    const rows: UsageRow[] = [];
    for (const d of deltas) {
      if (q.consumer !== undefined && d.consumer !== q.consumer) continue;
      if (q.upstream !== undefined && d.upstream !== q.upstream) continue;
      const row = { day: d.day, consumer: d.consumer, upstream: d.upstream } as UsageRow;
      USAGE_COUNTER_NAMES.forEach((n, i) => {
        row[n] = d.counts[i];
        totals[n] += d.counts[i];
      });
      rows.push(row);
    }
    rows.sort(
      (a, b) =>
        a.day.localeCompare(b.day) ||
        a.consumer.localeCompare(b.consumer) ||
        a.upstream.localeCompare(b.upstream),
    );
    return { from: days[0] ?? dayOf(q.fromMs), to: dayOf(q.toMs), store: this.storeKind, rows, totals };
  }

  /** Stops the timer and sends what is left (best effort). */
  async close(): Promise<void> {
    this.closed = true;
    if (this.timer !== undefined) this.opts.clock.clearTimeout(this.timer);
    await this.flush().catch((err: unknown) => this.opts.onFlushError?.(err));
  }
}
