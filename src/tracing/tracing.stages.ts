import { GatewayError } from '../core/errors/gateway-error.js';
import type { UpstreamLimitStageOptions } from '../proxy/stages/upstream-limit.stage.js';
import type { Handler, ProxyRequest, ProxyResponse, Stage } from '../proxy/pipeline.types.js';
import { childSpan, traceparentOf, type ActiveSpan } from '../core/tracing/trace-context.js';

/**
 * Puts the trace context on every vendor call: `traceparent` (parent: this attempt's span when spans are
 * recorded, else the gateway's request span) and the consumer's `tracestate`. Inside retry, so each attempt
 * is its own span with its own status. Requests without a trace (built by hand) pass untouched.
 */
export function vendorTraceStage(upstream: string): Stage {
  if (!upstream) throw new Error('vendorTraceStage: upstream required');
  // No async wrapper: a request whose spans are not recorded passes on the next stage's own promise.
  return (next) => (req) => {
    const trace = req.trace;
    if (trace === undefined) return next(req);
    const span = childSpan(trace, 'vendor call', 'client', {
      'atrium.upstream': upstream,
      'atrium.route': req.route.id,
      'http.request.method': req.method,
    });
    req.headers.traceparent = traceparentOf(trace, span?.spanId);
    if (trace.tracestate !== undefined) req.headers.tracestate = trace.tracestate;
    if (span === undefined) return next(req);
    return spanned(span, next, req);
  };
}

async function spanned(span: ActiveSpan, next: Handler, req: ProxyRequest): Promise<ProxyResponse> {
  try {
    const res = await next(req);
    span.setAttribute('http.response.status_code', res.status);
    if (res.status >= 400) span.fail(undefined);
    return res;
  } catch (err) {
    if (err instanceof GatewayError && err.upstreamStatus !== undefined)
      span.setAttribute('http.response.status_code', err.upstreamStatus);
    span.fail(err);
    throw err;
  } finally {
    span.end();
  }
}

function timed<P>(span: ActiveSpan | undefined, wait: Promise<P>): Promise<P> {
  // Untraced: the wait itself, no promise layer of its own.
  return span === undefined ? wait : timedSpan(span, wait);
}

async function timedSpan<P>(span: ActiveSpan, wait: Promise<P>): Promise<P> {
  try {
    return await wait;
  } catch (err) {
    span.fail(err);
    throw err;
  } finally {
    span.end();
  }
}

/** The limit stage's options with the wait for an upstream budget token as a span (first call and retries). */
export function budgetTrace(limit: UpstreamLimitStageOptions, upstream: string): UpstreamLimitStageOptions {
  const gate = limit.gate;
  const span = (req: ProxyRequest, retry: boolean) =>
    childSpan(req.trace, 'upstream budget', 'internal', {
      'atrium.upstream': upstream,
      'atrium.retry': retry ? 1 : 0,
    });
  return {
    ...limit,
    gate: {
      acquire: (req) => timed(span(req, false), gate.acquire(req)),
      // A request whose spans are exported takes the full path: its budget span shows the refusal.
      ...(gate.refuseNow
        ? { refuseNow: (req: ProxyRequest) => (req.trace?.spans ? undefined : gate.refuseNow!(req)) }
        : {}),
      acquireRetry: (req) => timed(span(req, true), gate.acquireRetry(req)),
      settleSuccess: (permit) => gate.settleSuccess(permit),
      settleError: (permit, err) => gate.settleError(permit, err),
    },
  };
}
