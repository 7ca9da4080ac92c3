import type { GatewayError } from '../../core/errors/gateway-error.js';
import type { ProxyRequest, Stage } from '../pipeline.types.js';
import { fullJitterDelayMs } from '../limits/backoff.js';
import { isRetryable } from '../limits/outcome.js';
import type { RetryBudget } from '../limits/retry-budget.js';
import type { LimitGate } from './upstream-limit.stage.js';

export interface RetryStageOptions {
  /** Attempts per call, the first included (1 = never retry). */
  readonly attempts: number;
  readonly baseMs: number;
  readonly maxBackoffMs: number;
  readonly budget: RetryBudget;
  /** The upstream's limiter: records each failed attempt and admits each retry (cooldown, breaker, token). */
  readonly gate?: Pick<LimitGate, 'acquireRetry' | 'settleError'>;
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

const defaultSleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Retries idempotent GETs on connection errors, 502/503/504 and upstream 429s, with full-jitter exponential
 * backoff (after a 429: its Retry-After plus jitter). Every retry must fit the request's total deadline
 * (`req.deadline`, which the transport honours too), pass the upstream's limiter like a first call, and be
 * allowed by the retry budget (about 20 % of recent calls), so retries cannot multiply load in an outage.
 */
export function retryStage(o: RetryStageOptions): Stage {
  if (!(o.attempts >= 1)) throw new Error('retryStage: attempts must be ≥ 1');
  if (!(o.baseMs > 0) || !(o.maxBackoffMs >= o.baseMs))
    throw new Error('retryStage: need 0 < baseMs ≤ maxBackoffMs');
  if (!o.budget) throw new Error('retryStage: budget required');
  const now = o.now ?? ((): number => Date.now());
  const sleep = o.sleep ?? defaultSleep;
  const random = o.random ?? Math.random;
  const minAttemptMs = o.minAttemptMs ?? 100;

  return (next) => async (req) => {
    o.budget.recordCall(now());
    if (o.attempts === 1 || !mayRetry(req)) return next(req);
    for (let attempt = 1; ; attempt++) {
      try {
        return await next(req);
      } catch (e) {
        if (attempt >= o.attempts || !isRetryable(e)) throw e;
        // Settled here, so the limiter counts this attempt (and starts a cooldown for a 429) exactly once.
        const err = (o.gate ? await o.gate.settleError(req, e) : e) as GatewayError;
        let wait = fullJitterDelayMs(attempt, o.baseMs, o.maxBackoffMs, random);
        if (err.code === 'UPSTREAM_RATE_LIMITED') wait += (err.retryAfterSeconds ?? 1) * 1000;
        if (now() + wait + minAttemptMs > req.deadline) throw err;
        if (!o.budget.tryRetry(now())) throw err;
        await sleep(wait);
        if (o.gate) {
          try {
            await o.gate.acquireRetry(req);
          } catch {
            // Refused (breaker open, cooldown, no token in time): the client hears what really happened.
            throw err;
          }
        }
        o.onRetry?.();
      }
    }
  };
}
