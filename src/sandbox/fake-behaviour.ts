// Scriptable misbehaviour of a fake upstream: the behaviour record, its validation when set over HTTP,
// and the headers of the 429 answers a rate-limit window produces.

export type RateLimitHeader =
  'retry-after' | 'retry-after-date' | 'x-ratelimit-reset' | 'ratelimit-reset' | 'none';

export interface FakeBehaviour {
  /** Delay before answering. */
  latencyMs: number;
  /** The next `times` requests (undefined = all) get this answer; body defaults to the vendor's error body. */
  failWith?: { status: number; body?: string | object; headers?: Record<string, string>; times?: number };
  /**
   * After `afterCalls` served calls (counted since set) answer 429 for `retryAfterSeconds`, then serve
   * again and count anew. `x-ratelimit-reset` carries epoch seconds; the other headers carry delta seconds
   * (or an HTTP date for `retry-after-date`).
   */
  rateLimit?: { afterCalls: number; retryAfterSeconds: number; header?: RateLimitHeader };
  /** Destroy the socket (TCP RST) without answering, `times` times (undefined = always). */
  resetConnections?: { times?: number };
  /** Accept but never answer; close() still ends these sockets. */
  hang?: boolean;
  /** Answer 200 application/json with a valid JSON body of about that many bytes (streamed). */
  oversizeBytes?: number;
  /** Answer 200 application/json with a truncated JSON body. */
  malformedJson?: boolean;
  /** JSON success bodies also carry the credential the fake received (tests key scrubbing). */
  echoCredential?: boolean;
  /** Size of file responses; generated on the fly, never buffered whole. */
  fileBytes?: number;
}

const BEHAVIOUR_KEYS: ReadonlySet<string> = new Set([
  'latencyMs',
  'failWith',
  'rateLimit',
  'resetConnections',
  'hang',
  'oversizeBytes',
  'malformedJson',
  'echoCredential',
  'fileBytes',
]);

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Validates a behaviour patch received over HTTP; `null` clears a field. Throws on unknown keys or types. */
export function parseBehaviour(input: unknown): Partial<FakeBehaviour> {
  if (!isRecord(input)) throw new Error('behaviour must be a JSON object');
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(input)) {
    if (!BEHAVIOUR_KEYS.has(key)) throw new Error(`unknown behaviour "${key}"`);
    if (value === null) {
      out[key] = undefined;
      continue;
    }
    const expected = ['failWith', 'rateLimit', 'resetConnections'].includes(key)
      ? 'object'
      : ['hang', 'malformedJson', 'echoCredential'].includes(key)
        ? 'boolean'
        : 'number';
    if (typeof value !== expected || (expected === 'object' && !isRecord(value))) {
      throw new Error(`behaviour "${key}" must be a ${expected}`);
    }
    out[key] = value;
  }
  if (isRecord(out.failWith) && typeof out.failWith.status !== 'number') {
    throw new Error('failWith.status must be a number');
  }
  if (
    isRecord(out.rateLimit) &&
    (typeof out.rateLimit.afterCalls !== 'number' || typeof out.rateLimit.retryAfterSeconds !== 'number')
  ) {
    throw new Error('rateLimit needs numeric afterCalls and retryAfterSeconds');
  }
  return out;
}

/** Headers of a 429 during a rate-limit window that ends at `until` (epoch ms). */
export function rateLimitHeaders(
  rl: NonNullable<FakeBehaviour['rateLimit']>,
  until: number,
  now: number,
): Record<string, string> {
  const seconds = Math.max(0, Math.ceil((until - now) / 1000));
  const headers: Record<string, string> = {};
  switch (rl.header ?? 'retry-after') {
    case 'retry-after':
      headers['retry-after'] = String(seconds);
      break;
    case 'retry-after-date':
      headers['retry-after'] = new Date(Math.ceil(until / 1000) * 1000).toUTCString();
      break;
    case 'x-ratelimit-reset':
      headers['x-ratelimit-limit'] = String(rl.afterCalls);
      headers['x-ratelimit-remaining'] = '0';
      headers['x-ratelimit-reset'] = String(Math.ceil(until / 1000));
      break;
    case 'ratelimit-reset':
      headers['ratelimit-limit'] = String(rl.afterCalls);
      headers['ratelimit-remaining'] = '0';
      headers['ratelimit-reset'] = String(seconds);
      break;
    case 'none':
      break;
  }
  return headers;
}
