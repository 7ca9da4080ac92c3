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
  return (next) => async (req) => {
    const started = performance.now();
    let status: number | undefined;
    try {
      const res = await next(req);
      status = res.status;
      return res;
    } catch (err) {
      if (err instanceof GatewayError) status = err.upstreamStatus;
      throw err;
    } finally {
      record(req.route.id, status, performance.now() - started, req.requestId);
    }
  };
}
