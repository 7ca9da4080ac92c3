import { GatewayError } from '../../core/errors/gateway-error.js';
import type { ProxyRequest, ProxyResponse, Stage } from '../pipeline.types.js';
import { retrying, type RetryOptions } from './retries.js';

/**
 * What the limit stage needs from an upstream's limiter (UpstreamLimiter). Each admission gives a permit
 * that the stage keeps for that attempt and settles once; the limiter keeps nothing per request.
 */
export interface LimitGate<P = unknown> {
  /** Cooldown, breaker and a token for the first attempt; throws 429 / 503 GatewayErrors. */
  acquire(req: ProxyRequest): Promise<P>;
  /**
   * The refusal `acquire` would throw at once right now (cooldown, open breaker), or undefined; takes no
   * token and changes no state. Lets the cache stage refuse a miss that has nothing to fall back on before
   * it coalesces (a 429 storm costs no more than a hit).
   */
  refuseNow?(req: ProxyRequest): GatewayError | undefined;
  /** The same before a retry. */
  acquireRetry(req: ProxyRequest): Promise<P>;
  settleSuccess(permit: P): void;
  /** Records a failed attempt (once) and returns the error to pass on. */
  settleError(permit: P, err: unknown): Promise<unknown>;
}

export interface UpstreamLimitStageOptions {
  readonly gate: LimitGate;
  /** Every 429 UPSTREAM_RATE_LIMITED passed on (metrics). */
  readonly onRateLimited?: () => void;
}

/**
 * The upstream-limit stage: inside cache and coalescing, so only real upstream calls get here and spend
 * tokens. Cooldown and open breaker answer at once; otherwise the call waits (fairly, briefly) for a token.
 * The outcome feeds the breaker, the learned rate and, for an upstream 429, the fleet's cooldown. With
 * `retry`, a failed idempotent read is tried again here (retries.ts), each retry admitted by the same
 * limiter like a first call: the stage holds the permit of the attempt in flight and settles each one.
 */
export function upstreamLimitStage(
  opts: UpstreamLimitStageOptions & { readonly retry?: RetryOptions },
): Stage {
  const { gate } = opts;
  if (!gate || typeof gate.acquire !== 'function') throw new Error('upstreamLimitStage: gate required');
  const passOn = passingOn(opts);
  const retry = opts.retry ? retrying(opts.retry) : undefined;
  return (next) => {
    /** One admitted attempt, settled with its outcome: the error thrown is the settled one. */
    const attempt = async (permit: unknown, req: ProxyRequest): Promise<ProxyResponse> => {
      let res;
      try {
        res = await next(req);
      } catch (e) {
        throw await gate.settleError(permit, e);
      }
      gate.settleSuccess(permit);
      return res;
    };
    return async (req) => {
      let permit;
      try {
        permit = await gate.acquire(req);
      } catch (e) {
        throw passOn(e);
      }
      try {
        return await (retry ? retry(req, permit, attempt, gate) : attempt(permit, req));
      } catch (e) {
        throw passOn(e);
      }
    };
  };
}

function passingOn(opts: UpstreamLimitStageOptions): (e: unknown) => unknown {
  return (e) => {
    if (e instanceof GatewayError && e.code === 'UPSTREAM_RATE_LIMITED') opts.onRateLimited?.();
    return e;
  };
}

/**
 * The gate's refusal of any call right now, counted as the limit stage counts one it passes on
 * (`onRateLimited`); undefined when the gate cannot tell without waiting. For the cache stage's early refusal.
 */
export function refusalOf(
  opts: UpstreamLimitStageOptions,
): ((req: ProxyRequest) => GatewayError | undefined) | undefined {
  const { gate } = opts;
  if (!gate.refuseNow) return undefined;
  const passOn = passingOn(opts);
  return (req) => {
    const err = gate.refuseNow!(req);
    if (err) passOn(err);
    return err;
  };
}
