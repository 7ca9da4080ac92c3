import { randomBytes } from 'node:crypto';

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
  /** Marks the span failed (the error's code or name, never its message: it may hold vendor text). */
  fail(err: unknown): void;
  end(): void;
}

/** Starts children of the gateway's request span. */
export interface SpanStarter {
  start(name: string, kind: 'internal' | 'client', attributes?: Record<string, string | number>): ActiveSpan;
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

const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-[^\s]*)?$/;
const ZERO_TRACE = '0'.repeat(32);
const ZERO_SPAN = '0'.repeat(16);

export interface ParsedTraceparent {
  readonly traceId: string;
  readonly parentId: string;
  readonly flags: string;
}

/** W3C Trace Context `traceparent`; undefined when it is not a valid one (a new trace is started). */
export function parseTraceparent(value: unknown): ParsedTraceparent | undefined {
  if (typeof value !== 'string' || value.length < 55 || value.length > 512) return undefined;
  const m = TRACEPARENT.exec(value.trim());
  if (!m) return undefined;
  const [, version, traceId, parentId, flags, rest] = m;
  // Version ff is invalid; version 00 has exactly four fields. Later versions may add fields after ours.
  if (version === 'ff' || (version === '00' && rest !== undefined)) return undefined;
  if (traceId === ZERO_TRACE || parentId === ZERO_SPAN) return undefined;
  return { traceId, parentId, flags };
}

const TRACESTATE = /^[\x20-\x7e]{1,512}$/;

/** `tracestate` is passed on as sent when it is printable and of sane length; otherwise dropped. */
export function sanitizeTracestate(value: unknown): string | undefined {
  return typeof value === 'string' && TRACESTATE.test(value) ? value : undefined;
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
  const parsed = parseTraceparent(traceparent);
  if (!parsed) return { traceId: randomHex(16), spanId: randomHex(8), flags: '00' };
  return {
    traceId: parsed.traceId,
    spanId: randomHex(8),
    flags: parsed.flags,
    tracestate: sanitizeTracestate(tracestate),
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
