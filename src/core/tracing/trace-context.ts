import { randomBytes } from 'node:crypto';
import { ROOT_CONTEXT, defaultTextMapGetter, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';

declare module 'fastify' {
  interface FastifyRequest {
    /** W3C trace context of the request (set by the tracing onRequest hook, the first one). */
    trace?: RequestTrace;
  }
}

/** A span the gateway records (only when spans are exported); ended exactly once. */
export interface ActiveSpan {
  readonly spanId: string;
  setAttribute(name: string, value: string | number | boolean): void;
  /**
   * Marks the span failed: the error's code or name, never its message (it may hold vendor text); a string
   * is an envelope's error code.
   */
  fail(err: unknown): void;
  end(): void;
}

/** Starts children of the gateway's request span (or of a span under it). */
export interface SpanStarter {
  start(name: string, kind: 'internal' | 'client', attributes?: Record<string, string | number>): ActiveSpan;
  /** An internal child span, and what starts spans under it (a batch item's or view part's inner call). */
  nest(name: string, attributes?: Record<string, string | number>): { span: ActiveSpan; spans: SpanStarter };
}

/**
 * The W3C trace context of one request: the consumer's `traceparent` (or a trace the gateway started), the
 * id of the gateway's own span as the parent of vendor calls, and, when spans are exported, the starter of
 * child spans. Without export this is four strings and no SDK object: propagation and log correlation only.
 */
export interface RequestTrace {
  readonly traceId: string;
  readonly spanId: string;
  /** Trace flags, two hex digits (`01`: sampled). */
  readonly flags: string;
  readonly tracestate?: string;
  readonly spans?: SpanStarter;
}

export interface ParsedTraceparent {
  readonly traceId: string;
  readonly parentId: string;
  /** Trace flags, two hex digits. */
  readonly flags: string;
  /** The consumer's `tracestate`, as OpenTelemetry re-serialises its valid members. */
  readonly tracestate?: string;
}

const propagator = new W3CTraceContextPropagator();

/**
 * The consumer's W3C trace context, read by OpenTelemetry's propagator; undefined when `traceparent` is
 * absent or not a valid one (a new trace is started).
 */
export function parseTraceparent(traceparent: unknown, tracestate?: unknown): ParsedTraceparent | undefined {
  if (typeof traceparent !== 'string') return undefined;
  const carrier: Record<string, string> = { traceparent };
  if (typeof tracestate === 'string') carrier.tracestate = tracestate;
  const span = trace.getSpanContext(propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter));
  if (!span) return undefined;
  return {
    traceId: span.traceId,
    parentId: span.spanId,
    flags: span.traceFlags.toString(16).padStart(2, '0'),
    tracestate: span.traceState?.serialize() || undefined,
  };
}

export function traceparentOf(trace: RequestTrace, spanId = trace.spanId): string {
  return '00-' + trace.traceId + '-' + spanId + '-' + trace.flags;
}

const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let offset = 0;

/** Random ids from a pooled buffer: one crypto call per few hundred requests. */
export function randomHex(bytes: number): string {
  if (offset + bytes > pool.length) {
    pool = randomBytes(POOL_BYTES);
    offset = 0;
  }
  const s = pool.toString('hex', offset, offset + bytes);
  offset += bytes;
  return s;
}

/** A fresh context for a request: the consumer's trace when it sent one, else a new (unsampled) one. */
export function untracedContext(traceparent: unknown, tracestate: unknown): RequestTrace {
  const parsed = parseTraceparent(traceparent, tracestate);
  if (!parsed) return { traceId: randomHex(16), spanId: randomHex(8), flags: '00' };
  return {
    traceId: parsed.traceId,
    spanId: randomHex(8),
    flags: parsed.flags,
    tracestate: parsed.tracestate,
  };
}

/** A child span of the request, or undefined when spans are not recorded (the usual, free case). */
export function childSpan(
  trace: RequestTrace | undefined,
  name: string,
  kind: 'internal' | 'client' = 'internal',
  attributes?: Record<string, string | number>,
): ActiveSpan | undefined {
  return trace?.spans?.start(name, kind, attributes);
}

/**
 * An inner call's own span under the request's (a batch item, a view part) and the trace the inner call
 * runs with: its spans are children of that span, and its vendor calls name it as their parent. Without
 * span export, the request's trace as it is and no span.
 */
export function nestedTrace(
  trace: RequestTrace | undefined,
  name: string,
  attributes?: Record<string, string | number>,
): { trace?: RequestTrace; span?: ActiveSpan } {
  const starter = trace?.spans;
  if (trace === undefined || starter === undefined) return { trace };
  const { span, spans } = starter.nest(name, attributes);
  return {
    span,
    trace: {
      traceId: trace.traceId,
      spanId: span.spanId,
      flags: trace.flags,
      ...(trace.tracestate !== undefined && { tracestate: trace.tracestate }),
      spans,
    },
  };
}

/** Ends an inner call's span with its answer's status; a failed answer marks it failed with its envelope's code. */
export function endSpanWith(span: ActiveSpan, status: number, errorCode: unknown): void {
  span.setAttribute('http.response.status_code', status);
  if (status >= 400) {
    if (typeof errorCode === 'string') span.setAttribute('atrium.error_code', errorCode);
    span.fail(typeof errorCode === 'string' ? errorCode : undefined);
  }
  span.end();
}
