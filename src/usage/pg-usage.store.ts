import { randomUUID } from 'node:crypto';
import type { Pool } from 'pg';
import { COUNTER_COUNT, USAGE_COUNTER_NAMES, type UsageCounterName } from './usage-counters.js';
import type { UsageDelta, UsageFilter, UsageStore } from './usage-store.js';

/** The ledger's column of each counter (the migration's `atrium_usage`). */
export const USAGE_COLUMNS = {
  requests: 'requests',
  cacheAnswers: 'cache_answers',
  coalesced: 'coalesced',
  vendorCalls: 'vendor_calls',
  vendorErrors: 'vendor_errors',
  quotaRejections: 'quota_rejections',
  shieldRejections: 'shield_rejections',
  watchPolls: 'watch_polls',
} as const satisfies Record<UsageCounterName, string>;

const COLUMNS = USAGE_COUNTER_NAMES.map((n) => USAGE_COLUMNS[n]);

// One statement: the batch id and its counts are added together or not at all, and a batch id seen before
// (a resend after an acknowledgement lost on the way back) adds nothing.
const ADD_SQL = `
WITH batch AS (INSERT INTO atrium_usage_batches (id) VALUES ($1) ON CONFLICT DO NOTHING RETURNING id)
INSERT INTO atrium_usage (day, consumer, upstream, ${COLUMNS.join(', ')})
SELECT d.* FROM unnest($2::date[], $3::text[], $4::text[], ${COLUMNS.map((_, i) => `$${i + 5}::bigint[]`).join(', ')})
       AS d(day, consumer, upstream, ${COLUMNS.join(', ')})
 WHERE EXISTS (SELECT 1 FROM batch)
ON CONFLICT (day, consumer, upstream) DO UPDATE SET
${COLUMNS.map((c) => `  ${c} = atrium_usage.${c} + EXCLUDED.${c}`).join(',\n')}`;

const READ_SQL = `
SELECT to_char(day, 'YYYY-MM-DD') AS day, consumer, upstream, ${COLUMNS.join(', ')}
  FROM atrium_usage
 WHERE day BETWEEN $1::date AND $2::date
   AND ($3::text IS NULL OR consumer = $3) AND ($4::text IS NULL OR upstream = $4)`;

/** Batch ids are kept long enough to recognise any resend, then pruned. */
const BATCH_ID_RETENTION = '2 days';
const PRUNE_EVERY_MS = 3_600_000;

interface Batch {
  readonly id: string;
  readonly rows: Map<string, UsageDelta>;
  attempted: boolean;
}

export interface PgUsageStoreOptions {
  readonly pool: Pool;
  /** Resolves once the schema is in place. */
  readonly ready?: () => Promise<void>;
  /** Rows kept while the database is away; rows of new pairs past it are dropped (and counted). */
  readonly maxBufferedRows: number;
  readonly onDropped?: (rows: number) => void;
  readonly now?: () => number;
}

/**
 * The usage ledger in PostgreSQL: per UTC day, consumer and upstream, one row of counters, added to by one
 * upsert per flush (whatever the request rate). While the database is away the flushes wait here: a batch
 * once sent keeps its id (so a resend is never counted twice) and later counts merge into one unsent batch,
 * so the buffer grows with the pairs counted, not with time; pairs past the bound are dropped and counted.
 */
export class PgUsageStore implements UsageStore {
  readonly kind = 'postgres' as const;
  readonly buffers = true;
  private readonly queue: Batch[] = [];
  private dropped = 0;
  private lastPrune = 0;

  constructor(private readonly opts: PgUsageStoreOptions) {}

  /** Rows waiting for the database. */
  get bufferedRows(): number {
    return this.queue.reduce((n, b) => n + b.rows.size, 0);
  }

  /** Rows dropped since start because the buffer was full. */
  get droppedRows(): number {
    return this.dropped;
  }

  async add(deltas: readonly UsageDelta[]): Promise<void> {
    this.enqueue(deltas);
    while (this.queue.length > 0) {
      const batch = this.queue[0];
      batch.attempted = true;
      await this.write(batch);
      this.queue.shift();
    }
    await this.prune();
  }

  private enqueue(deltas: readonly UsageDelta[]): void {
    if (deltas.length === 0) return;
    let tail = this.queue.at(-1);
    if (!tail || tail.attempted)
      this.queue.push((tail = { id: randomUUID(), rows: new Map(), attempted: false }));
    let room = this.opts.maxBufferedRows - this.bufferedRows;
    let dropped = 0;
    for (const d of deltas) {
      const key = `${d.day}|${d.consumer}|${d.upstream}`;
      const cur = tail.rows.get(key);
      if (cur) for (let i = 0; i < COUNTER_COUNT; i++) cur.counts[i] += d.counts[i];
      else if (room > 0) {
        tail.rows.set(key, { ...d, counts: Float64Array.from(d.counts) });
        room--;
      } else dropped++;
    }
    if (tail.rows.size === 0) this.queue.pop();
    if (dropped > 0) {
      this.dropped += dropped;
      this.opts.onDropped?.(dropped);
    }
  }

  private async write(batch: Batch): Promise<void> {
    await this.opts.ready?.();
    const rows = [...batch.rows.values()];
    const counts = COLUMNS.map((_, i) => rows.map((r) => Math.round(r.counts[i])));
    await this.opts.pool.query(ADD_SQL, [
      batch.id,
      rows.map((r) => r.day),
      rows.map((r) => r.consumer),
      rows.map((r) => r.upstream),
      ...counts,
    ]);
  }

  private async prune(): Promise<void> {
    const now = (this.opts.now ?? Date.now)();
    if (now - this.lastPrune < PRUNE_EVERY_MS) return;
    this.lastPrune = now;
    await this.opts.pool
      .query(`DELETE FROM atrium_usage_batches WHERE at < now() - interval '${BATCH_ID_RETENTION}'`)
      .catch(() => undefined);
  }

  async read(days: readonly string[], filter: UsageFilter = {}): Promise<UsageDelta[]> {
    if (days.length === 0) return [];
    await this.opts.ready?.();
    const sorted = [...days].sort();
    const r = await this.opts.pool.query<Record<string, string>>(READ_SQL, [
      sorted[0],
      sorted.at(-1),
      filter.consumer ?? null,
      filter.upstream ?? null,
    ]);
    return r.rows.map((row) => ({
      day: row.day,
      consumer: row.consumer,
      upstream: row.upstream,
      counts: Float64Array.from(COLUMNS.map((c) => Number(row[c]))),
    }));
  }
}
