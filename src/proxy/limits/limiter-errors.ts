import { GatewayError } from '../../core/errors/gateway-error.js';

/**
 * The refusals a limiter answers with, worded for the consumer (`title`: "the macroeconomic data service").
 * Budget, cooldown and breaker refusals come at request rate under load: built without a stack trace.
 */

/** Whole seconds for a `Retry-After`, at least 1. */
export function retryAfterSeconds(ms: number): number {
  return Math.max(1, Math.ceil(ms / 1000));
}

/** The budget is spent: the queue ahead (plus this request) drains at `ratePerSec`. */
export function budgetSpentError(
  upstream: string,
  title: string,
  costAhead: number,
  ratePerSec: number,
): GatewayError {
  const seconds = Math.max(1, Math.ceil(costAhead / ratePerSec));
  return GatewayError.expected('UPSTREAM_RATE_LIMITED', {
    upstream,
    retryAfterSeconds: seconds,
    message: `The gateway's shared budget for ${title} is spent for now; retry in ${seconds} s.`,
  });
}

export function coolingDownError(upstream: string, title: string, ms: number): GatewayError {
  const seconds = retryAfterSeconds(ms);
  return GatewayError.shared('UPSTREAM_RATE_LIMITED', {
    upstream,
    retryAfterSeconds: seconds,
    message: `${capitalise(title)} is rate limiting the gateway; retry in ${seconds} s.`,
  });
}

export function circuitOpenError(upstream: string, title: string, openRemainingMs: number): GatewayError {
  return GatewayError.shared('UPSTREAM_UNAVAILABLE', {
    upstream,
    upstreamCode: 'CIRCUIT_OPEN',
    retryAfterSeconds: retryAfterSeconds(openRemainingMs),
    message: `${capitalise(title)} is failing; the gateway stopped calling it for now.`,
  });
}

/**
 * One refusal per whole second of `Retry-After`: while a cooldown or an open breaker refuses every call,
 * the requests refused in the same second share one error (`GatewayError.shared`), whose envelope the
 * exception filter serialises once. A 429 storm then builds no error and no envelope per request.
 */
export class RefusalMemo {
  private seconds = 0;
  private err: GatewayError | undefined;

  constructor(private readonly make: (ms: number) => GatewayError) {}

  /** The refusal for `ms` left (the same instance as the last call's when the seconds are the same). */
  at(ms: number): GatewayError {
    const seconds = retryAfterSeconds(ms);
    if (this.err === undefined || seconds !== this.seconds) {
      this.err = this.make(ms);
      this.seconds = seconds;
    }
    return this.err;
  }
}

export function shuttingDownError(upstream: string): GatewayError {
  return new GatewayError('UPSTREAM_UNAVAILABLE', {
    upstream,
    message: 'The gateway is shutting down.',
  });
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
