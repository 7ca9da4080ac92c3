import { RETRY_AFTER_CEILING_SECONDS } from '../../config/retry-after-ceiling.js';

/**
 * When may a rate-limited caller try again? Reads `Retry-After` (delta seconds or an HTTP date) and the
 * `X-RateLimit-Reset` / `RateLimit-Reset` family (delta seconds, or an epoch timestamp in seconds or ms).
 * Returns whole seconds in [1, RETRY_AFTER_CEILING_SECONDS], or undefined when no header gives a usable
 * answer: garbage and negative numbers count as no header (the caller's default applies); a time already
 * past counts as 1 s. The caller applies its own, lower maximum (the upstream limits' cooldown maximum).
 */
export function parseRetryAfterSeconds(
  headers: Record<string, string | string[] | undefined>,
  now: number = Date.now(),
): number | undefined {
  const retryAfter = first(headers['retry-after']);
  if (retryAfter !== undefined) {
    const s = parseRetryAfterValue(retryAfter, now);
    if (s !== undefined) return s;
  }
  for (const name of ['ratelimit-reset', 'x-ratelimit-reset', 'x-rate-limit-reset']) {
    const v = first(headers[name]);
    if (v === undefined) continue;
    const s = parseResetValue(v, now);
    if (s !== undefined) return s;
  }
  return undefined;
}

const DAY = '(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun)';
const LONG_DAY = '(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)';
const MONTH = '(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec)';
const TIME = '\\d{2}:\\d{2}:\\d{2}';
/** The three HTTP-date forms (RFC 9110 §5.6.7); anything else is garbage, however Date.parse reads it. */
const IMF_FIXDATE = new RegExp(`^${DAY}, \\d{2} ${MONTH} \\d{4} ${TIME} GMT$`, 'i');
const RFC850_DATE = new RegExp(`^${LONG_DAY}, \\d{2}-${MONTH}-\\d{2} ${TIME} GMT$`, 'i');
const ASCTIME_DATE = new RegExp(`^${DAY} ${MONTH} [ \\d]\\d ${TIME} \\d{4}$`, 'i');

/** `Retry-After: 120` or `Retry-After: Wed, 21 Oct 2026 07:28:00 GMT`. */
export function parseRetryAfterValue(value: string, now: number = Date.now()): number | undefined {
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return clampSeconds(Number(v));
  let at: number;
  if (IMF_FIXDATE.test(v) || RFC850_DATE.test(v)) at = Date.parse(v);
  // asctime carries no zone but means GMT; Date.parse would read it as local time.
  else if (ASCTIME_DATE.test(v)) at = Date.parse(v + ' GMT');
  else return undefined;
  if (Number.isNaN(at)) return undefined;
  return clampSeconds((at - now) / 1000);
}

/** Reset headers: small numbers are a delta in seconds; large ones an epoch in seconds or milliseconds. */
export function parseResetValue(value: string, now: number = Date.now()): number | undefined {
  const v = value.trim();
  if (!/^\d+(\.\d+)?$/.test(v)) return undefined;
  const n = Number(v);
  if (n > 1e12) return clampSeconds((n - now) / 1000);
  if (n > 1e9) return clampSeconds(n - now / 1000);
  return clampSeconds(n);
}

export { RETRY_AFTER_CEILING_SECONDS };

function clampSeconds(s: number): number {
  if (!Number.isFinite(s)) return RETRY_AFTER_CEILING_SECONDS;
  return Math.min(RETRY_AFTER_CEILING_SECONDS, Math.max(1, Math.ceil(s)));
}

function first(v: string | string[] | undefined): string | undefined {
  return Array.isArray(v) ? v[0] : v;
}
