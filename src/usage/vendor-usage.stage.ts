import type { ProxyRequest, Stage } from '../proxy/pipeline.types.js';
import type { UpstreamLimitStageOptions } from '../proxy/stages/upstream-limit.stage.js';
import { U_SHIELD, U_VENDOR_CALLS, U_VENDOR_ERRORS } from './usage-counters.js';
import type { UsageRecorder } from './usage-recorder.js';

/**
 * Counts every call sent to the vendor (each attempt: placed inside retry, beside the upstream metrics) for
 * the consumer whose request made it, and those that failed: an error status, an error the normaliser read
 * in a 2xx body, a timeout or no answer. A coalesced burst spends one call, on the leader's consumer.
 */
export function vendorUsageStage(recorder: UsageRecorder, upstream: string): Stage {
  if (!upstream) throw new Error('vendorUsageStage: upstream required');
  // `.then` on the next stage's promise: no async wrapper.
  return (next) => (req) => {
    const cell = recorder.cell(req.consumerId, upstream);
    recorder.add(cell, U_VENDOR_CALLS);
    return Promise.resolve(next(req)).then(
      (res) => {
        if (res.status >= 400) recorder.add(cell, U_VENDOR_ERRORS);
        return res;
      },
      (err: unknown) => {
        recorder.add(cell, U_VENDOR_ERRORS);
        throw err;
      },
    );
  };
}

/**
 * The upstream-limit stage's options with the shield's refusals counted: a first attempt the limiter did
 * not let through (cooldown after a vendor 429, open breaker, no budget token in time) is a vendor call
 * the shield saved, charged to the consumer who asked.
 */
export function shieldUsage(
  limit: UpstreamLimitStageOptions,
  recorder: UsageRecorder,
  upstream: string,
): UpstreamLimitStageOptions {
  const gate = limit.gate;
  return {
    ...limit,
    gate: {
      acquire: (req) =>
        gate.acquire(req).catch((err: unknown) => {
          recorder.count(req.consumerId, upstream, U_SHIELD);
          throw err;
        }),
      ...(gate.refuseNow
        ? {
            refuseNow: (req: ProxyRequest) => {
              const err = gate.refuseNow!(req);
              if (err) recorder.count(req.consumerId, upstream, U_SHIELD);
              return err;
            },
          }
        : {}),
      acquireRetry: (req) => gate.acquireRetry(req),
      settleSuccess: (permit) => gate.settleSuccess(permit),
      settleError: (permit, err) => gate.settleError(permit, err),
    },
  };
}
