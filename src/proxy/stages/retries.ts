import type { GatewayError } from '../../core/errors/gateway-error.js';
import type { ProxyRequest, ProxyResponse } from '../pipeline.types.js';
import { fullJitterDelayMs } from '../limits/backoff.js';
import { isRetryable } from '../limits/outcome.js';
import type { RetryBudget } from '../limits/retry-budget.js';

export interface RetryOptions {
  /** Attempts per call, the first included (1 = never retry). */
  readonly attempts: number;
  readonly baseMs: number;
  readonly maxBackoffMs: number;
  readonly budget: RetryBudget;
  readonly onRetry?: () => void;
  /** A retry is not started unless this much of the deadline is left after its backoff. */
  readonly minAttemptMs?: number;
  readonly random?: () => number;
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

/** Only idempotent reads are retried: never a write, a GET with a side effect, or a streamed file. */
export function mayRetry(req: ProxyRequest): boolean {
  return req.method === 'GET' && req.route.sideEffect !== true && req.route.file !== true;
}

/** One admitted attempt with its permit: settles it and throws the settled error. */
export type Attempt<P> = (permit: P, req: ProxyRequest) => Promise<ProxyResponse>;

/** What a retry needs from the limiter: an admission like a first call's. */
export interface RetryAdmission<P> {
  acquireRetry(req: ProxyRequest): Promise<P>;
}

const defaultSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Each attempt starts from the call as it came: the stages inside rewrite query, headers and body. */
const fresh = (req: ProxyRequest): ProxyRequest => ({
  ...req,
  query: [...req.query],
  headers: { ...req.headers },
});

/**
 * The retries of the limit stage (upstream-limit.stage.ts): idempotent GETs are tried again on connection
 * errors, 502/503/504 and upstream 429s, with full-jitter exponential backoff (after a 429: its Retry-After
 * plus jitter). Every retry must fit the request's total deadline (`req.deadline`, which the transport
 * honours too), pass the upstream's limiter like a first call, and be allowed by the retry budget (about
 * 20 % of recent calls), so retries cannot multiply load in an outage. A retry the limiter refuses ends the
 * call with the failure the client would have heard without it.
 */
export function retrying(
  o: RetryOptions,
): <P>(req: ProxyRequest, first: P, attempt: Attempt<P>, gate: RetryAdmission<P>) => Promise<ProxyResponse> {
  if (!(o.attempts >= 1)) throw new Error('retry: attempts must be ≥ 1');
  if (!(o.baseMs > 0) || !(o.maxBackoffMs >= o.baseMs))
    throw new Error('retry: need 0 < baseMs ≤ maxBackoffMs');
  if (!o.budget) throw new Error('retry: budget required');
  const now = o.now ?? ((): number => Date.now());
  const sleep = o.sleep ?? defaultSleep;
  const random = o.random ?? Math.random;
  const minAttemptMs = o.minAttemptMs ?? 100;

  return async (req, first, attempt, gate) => {
    o.budget.recordCall(now());
    if (o.attempts === 1 || !mayRetry(req)) return attempt(first, req);
    let permit = first;
    for (let n = 1; ; n++) {
      try {
        return await attempt(permit, fresh(req));
      } catch (settledError) {
        // Settled by the attempt, so the limiter counted it (and started a cooldown for a 429) exactly once.
        const err = settledError as GatewayError;
        if (n >= o.attempts || !isRetryable(err)) throw err;
        let wait = fullJitterDelayMs(n, o.baseMs, o.maxBackoffMs, random);
        if (err.code === 'UPSTREAM_RATE_LIMITED') wait += (err.retryAfterSeconds ?? 1) * 1000;
        if (now() + wait + minAttemptMs > req.deadline) throw err;
        if (!o.budget.tryRetry(now())) throw err;
        await sleep(wait);
        try {
          permit = await gate.acquireRetry(req);
        } catch {
          // Refused (breaker open, cooldown, no token in time): the client hears what really happened.
          throw err;
        }
        o.onRetry?.();
      }
    }
  };
}
