import type { ErrorCode } from '../../core/errors/error-codes.js';
import { ERROR_STATUS } from '../../core/errors/error-codes.js';
import { GatewayError } from '../../core/errors/gateway-error.js';

/** A failed leader's error as it travels through Redis to the waiters on other replicas. */
interface ErrorMarker {
  /** The leader's token: a waiter only takes the error of the leader it waited for. */
  h: string;
  code: ErrorCode;
  message: string;
  upstream?: string;
  upstreamStatus?: number;
  upstreamCode?: string | number;
  retryAfterSeconds?: number;
  fromUpstream?: boolean;
}

/** The marker text for `err`; anything but a GatewayError travels as a generic INTERNAL (no details). */
export function encodeErrorMarker(holder: string, err: unknown): string {
  const m: ErrorMarker =
    err instanceof GatewayError
      ? {
          h: holder,
          code: err.code,
          message: err.message,
          upstream: err.upstream,
          upstreamStatus: err.upstreamStatus,
          upstreamCode: err.upstreamCode,
          retryAfterSeconds: err.retryAfterSeconds,
          fromUpstream: err.fromUpstream,
        }
      : { h: holder, code: 'INTERNAL', message: 'An internal gateway error occurred.' };
  return JSON.stringify(m);
}

/** The leader's error, rebuilt for a waiter on another replica; undefined if the marker is someone else's. */
export function decodeErrorMarker(text: string, holder: string): GatewayError | undefined {
  let m: ErrorMarker;
  try {
    m = JSON.parse(text) as ErrorMarker;
  } catch {
    return undefined;
  }
  if (m.h !== holder || !(m.code in ERROR_STATUS)) return undefined;
  return new GatewayError(m.code, {
    message: m.message,
    upstream: m.upstream,
    upstreamStatus: m.upstreamStatus,
    upstreamCode: m.upstreamCode,
    retryAfterSeconds: m.retryAfterSeconds,
    fromUpstream: m.fromUpstream,
  });
}
