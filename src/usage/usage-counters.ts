/**
 * What is counted per consumer, per upstream, per UTC day: the figures an operator needs to split a vendor
 * bill and to see who hits a quota. The index is the position in a cell's counts; the metric (if any) is
 * the `/metrics` counter labelled by consumer and upstream (requests already have
 * `atrium_consumer_requests_total`).
 */
export const USAGE_COUNTERS = [
  { name: 'requests', help: '', metric: undefined },
  {
    name: 'cacheAnswers',
    metric: 'atrium_consumer_cache_answers_total',
    help: 'Requests answered from the response cache (fresh or stale), by consumer and upstream.',
  },
  {
    name: 'coalesced',
    metric: 'atrium_consumer_coalesced_total',
    help: "Requests answered by another request's upstream call (coalesced), by consumer and upstream.",
  },
  {
    name: 'vendorCalls',
    metric: 'atrium_consumer_vendor_calls_total',
    help: 'Calls sent to the vendor (each attempt, retries included) on behalf of a consumer, by upstream.',
  },
  {
    name: 'vendorErrors',
    metric: 'atrium_consumer_vendor_errors_total',
    help: 'Vendor calls that failed (error status, error body, timeout, no answer), by consumer and upstream.',
  },
  {
    name: 'quotaRejections',
    metric: 'atrium_consumer_quota_rejections_total',
    help: "Requests refused by the consumer's own quota (429 CONSUMER_RATE_LIMITED), by consumer and upstream.",
  },
  {
    name: 'shieldRejections',
    metric: 'atrium_consumer_shield_rejections_total',
    help: 'Vendor calls the rate-limit shield refused to make (cooldown, open breaker, no budget in time).',
  },
  {
    name: 'watchPolls',
    metric: 'atrium_consumer_watch_polls_total',
    help: 'Polls of resources a consumer watches (GET /watch), one per poll and watching consumer, by upstream.',
  },
] as const satisfies ReadonlyArray<{ name: string; help: string; metric: string | undefined }>;

export type UsageCounterName = (typeof USAGE_COUNTERS)[number]['name'];
export const USAGE_COUNTER_NAMES: readonly UsageCounterName[] = USAGE_COUNTERS.map((c) => c.name);
export const COUNTER_COUNT = USAGE_COUNTERS.length;

/** Positions in a cell's counts (hot path: an index, not a name). */
export const U_REQUESTS = 0;
export const U_CACHE = 1;
export const U_COALESCED = 2;
export const U_VENDOR_CALLS = 3;
export const U_VENDOR_ERRORS = 4;
export const U_QUOTA = 5;
export const U_SHIELD = 6;
export const U_WATCH_POLLS = 7;

export type UsageCounts = Record<UsageCounterName, number>;

export function zeroCounts(): UsageCounts {
  return Object.fromEntries(USAGE_COUNTER_NAMES.map((n) => [n, 0])) as UsageCounts;
}

const DAY_MS = 86_400_000;

/** `2025-03-14` (UTC) of an epoch ms. */
export function dayOf(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Start of the UTC day after the one holding `ms`. */
export function nextDayStart(ms: number): number {
  return (Math.floor(ms / DAY_MS) + 1) * DAY_MS;
}

const DAY = /^\d{4}-\d{2}-\d{2}$/;

/** Epoch ms of a `YYYY-MM-DD` (UTC midnight), or undefined when it is not a real date. */
export function parseDay(s: string): number | undefined {
  if (!DAY.test(s)) return undefined;
  const ms = Date.parse(`${s}T00:00:00Z`);
  return Number.isFinite(ms) && dayOf(ms) === s ? ms : undefined;
}

/** Every day from `from` to `to` inclusive (both `YYYY-MM-DD`). */
export function daysBetween(fromMs: number, toMs: number): string[] {
  const out: string[] = [];
  for (let t = fromMs; t <= toMs; t += DAY_MS) out.push(dayOf(t));
  return out;
}

export { DAY_MS };
