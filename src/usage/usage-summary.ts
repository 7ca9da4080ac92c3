import type { UsageStoreKind } from './usage-store.js';
import {
  DAY_MS,
  dayOf,
  parseDay,
  USAGE_COUNTER_NAMES,
  zeroCounts,
  type UsageCounts,
} from './usage-counters.js';
import type { UsageReport } from './usage-recorder.js';

export interface UsageSummaryRow {
  consumer: string;
  upstream: string;
  today: UsageCounts;
  /** The last 7 days, today included. */
  week: UsageCounts;
}

/** What the console shows: per consumer and upstream, today and the last 7 days. */
export interface UsageSummary {
  store: UsageStoreKind;
  today: string;
  from: string;
  rows: UsageSummaryRow[];
}

/** The range of the console's summary: the 7 UTC days ending today. */
export function summaryRange(now: number): { fromMs: number; toMs: number } {
  const toMs = parseDay(dayOf(now))!;
  return { fromMs: toMs - 6 * DAY_MS, toMs };
}

export function summarise(report: UsageReport, today: string): UsageSummary {
  const byPair = new Map<string, UsageSummaryRow>();
  for (const r of report.rows) {
    const key = `${r.consumer}|${r.upstream}`;
    let row = byPair.get(key);
    if (!row) {
      row = { consumer: r.consumer, upstream: r.upstream, today: zeroCounts(), week: zeroCounts() };
      byPair.set(key, row);
    }
    for (const n of USAGE_COUNTER_NAMES) {
      row.week[n] += r[n];
      if (r.day === today) row.today[n] += r[n];
    }
  }
  const rows = [...byPair.values()].sort(
    (a, b) => b.week.vendorCalls - a.week.vendorCalls || a.consumer.localeCompare(b.consumer),
  );
  return { store: report.store, today, from: report.from, rows };
}
