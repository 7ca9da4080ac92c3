import { GatewayError } from '../../core/errors/gateway-error.js';

/**
 * What a failed call says about the upstream:
 * - `failure`: breakage (5xx, timeouts, refused/reset connections): counts against the breaker;
 * - `throttled`: the upstream answered 429: a cooldown, not breakage;
 * - `alive`: the upstream answered (4xx, an answer too large, our key refused): it is up;
 * - `neutral`: the call never reached the upstream (the gateway's own budget or breaker, a bug).
 */
export type Outcome = 'failure' | 'throttled' | 'alive' | 'neutral';

export function classifyOutcome(err: unknown): Outcome {
  if (!(err instanceof GatewayError)) return 'neutral';
  switch (err.code) {
    case 'UPSTREAM_RATE_LIMITED':
      return err.fromUpstream ? 'throttled' : 'neutral';
    case 'UPSTREAM_TIMEOUT':
      return 'failure';
    case 'UPSTREAM_UNAVAILABLE':
      return err.upstreamCode === 'CIRCUIT_OPEN' ? 'neutral' : 'failure';
    case 'RESPONSE_TOO_LARGE':
      // An answer over the size cap is the request's fault: the upstream answered.
      return 'alive';
    case 'UPSTREAM_ERROR':
      // A redirect is an answer; a 5xx, a broken body or a dropped stream is breakage.
      if (err.upstreamStatus !== undefined && err.upstreamStatus < 500) return 'alive';
      return 'failure';
    case 'UPSTREAM_AUTH_FAILED':
    case 'UPSTREAM_BAD_REQUEST':
    case 'UPSTREAM_FORBIDDEN':
    case 'NOT_FOUND':
    case 'UNSUPPORTED_FORMAT':
      return err.fromUpstream ? 'alive' : 'neutral';
    default:
      return 'neutral';
  }
}

/** Whether a failed idempotent call may be tried again: connection errors, 502/503/504, upstream 429s. */
export function isRetryable(err: unknown): err is GatewayError {
  if (!(err instanceof GatewayError)) return false;
  switch (err.code) {
    case 'UPSTREAM_RATE_LIMITED':
      return err.fromUpstream;
    case 'UPSTREAM_UNAVAILABLE':
      return err.upstreamCode !== 'CIRCUIT_OPEN';
    case 'UPSTREAM_TIMEOUT':
      return true;
    case 'UPSTREAM_ERROR':
      return err.upstreamStatus === 502 || err.upstreamStatus === 503;
    default:
      return false;
  }
}

/** The same error with a different `Retry-After` (GatewayError is immutable). */
export function withRetryAfter(err: GatewayError, seconds: number): GatewayError {
  if (err.retryAfterSeconds === seconds) return err;
  return new GatewayError(err.code, {
    message: err.message,
    upstream: err.upstream,
    upstreamStatus: err.upstreamStatus,
    upstreamCode: err.upstreamCode,
    parameter: err.parameter,
    fromUpstream: err.fromUpstream,
    retryAfterSeconds: seconds,
    cause: (err as { cause?: unknown }).cause,
  });
}
