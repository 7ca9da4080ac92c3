import { GatewayError } from '../../core/errors/gateway-error.js';
import type { Stage } from '../pipeline.types.js';
import type { UpstreamCallRecorder } from '../../core/ports/metrics.port.js';

export interface UpstreamMetricsStageOptions {
  /** Called once per upstream call with the route id, the upstream's HTTP status (undefined: no answer), ms. */
  readonly record: UpstreamCallRecorder;
}

/**
 * Counts and times every call to the upstream. Placed just outside the normaliser, so it sees each attempt
 * (inside retry) and the upstream's own status, whether the normaliser turned it into an answer or a typed
 * error. Knows no vendor.
 */
export function upstreamMetricsStage(opts: UpstreamMetricsStageOptions): Stage {
  if (typeof opts.record !== 'function') throw new Error('upstreamMetricsStage: record must be a function');
  const { record } = opts;
  // `.then` on the next handler's promise (Promise.resolve returns a native promise as is): no async wrapper.
  return (next) => (req) => {
    const started = performance.now();
    return Promise.resolve(next(req)).then(
      (res) => {
        record(req.route.id, res.status, performance.now() - started, req.requestId);
        return res;
      },
      (err: unknown) => {
        const status = err instanceof GatewayError ? err.upstreamStatus : undefined;
        record(req.route.id, status, performance.now() - started, req.requestId);
        throw err;
      },
    );
  };
}
