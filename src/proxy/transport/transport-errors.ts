import { GatewayError } from '../../core/errors/gateway-error.js';
import type { ErrorCode } from '../../core/errors/error-codes.js';

/** What went wrong on the wire, whatever the client library called it. */
export type TransportFailure = 'timeout' | 'refused' | 'reset' | 'tooLarge' | 'badBody' | 'unreachable';

interface FailureClass {
  /**
   * The envelope code: its status is 504 for timeouts, 503 for unreachable, 502 for a broken answer, 429
   * (not retryable) for an answer over the size cap, which only a narrower request avoids.
   */
  readonly code: ErrorCode;
  /** `upstreamCode` of the envelope (bounded, never the library's message); absent for timeouts. */
  readonly upstreamCode?: string;
}

/**
 * The transport-error taxonomy, as fastify-reply-from's lib/errors.js: one row per failure class.
 * Retries and the breaker read the code (503 and 504 are retryable, a broken answer is not re-sent blind).
 */
export const TRANSPORT_FAILURES = {
  timeout: { code: 'UPSTREAM_TIMEOUT' },
  refused: { code: 'UPSTREAM_UNAVAILABLE', upstreamCode: 'ECONNREFUSED' },
  reset: { code: 'UPSTREAM_UNAVAILABLE', upstreamCode: 'ECONNRESET' },
  unreachable: { code: 'UPSTREAM_UNAVAILABLE', upstreamCode: 'CONNECTION_FAILED' },
  tooLarge: { code: 'RESPONSE_TOO_LARGE', upstreamCode: 'RESPONSE_TOO_LARGE' },
  badBody: { code: 'UPSTREAM_ERROR', upstreamCode: 'INVALID_BODY' },
} as const satisfies Record<TransportFailure, FailureClass>;

/** undici and socket error codes, by failure class; anything unlisted is `unreachable` (DNS, closed …). */
export const TRANSPORT_ERROR_CODES = {
  UND_ERR_HEADERS_TIMEOUT: 'timeout',
  UND_ERR_BODY_TIMEOUT: 'timeout',
  UND_ERR_CONNECT_TIMEOUT: 'timeout',
  // Our own deadline aborts the call through its signal.
  UND_ERR_ABORTED: 'timeout',
  ABORT_ERR: 'timeout',
  ETIMEDOUT: 'timeout',
  ECONNREFUSED: 'refused',
  ECONNRESET: 'reset',
  EPIPE: 'reset',
  UND_ERR_SOCKET: 'reset',
  UND_ERR_RESPONSE_EXCEEDED_MAX_SIZE: 'tooLarge',
  UND_ERR_REQ_CONTENT_LENGTH_MISMATCH: 'badBody',
  UND_ERR_RES_CONTENT_LENGTH_MISMATCH: 'badBody',
  HPE_INVALID_CONSTANT: 'badBody',
  HPE_INVALID_CHUNK_SIZE: 'badBody',
  HPE_INVALID_CONTENT_LENGTH: 'badBody',
} as const satisfies Record<string, TransportFailure>;

/** The failure class of a thrown transport error (anything with a `code` or an AbortError name). */
export function transportFailureOf(err: unknown): TransportFailure {
  const e = err as { code?: unknown; name?: unknown } | null | undefined;
  const code = typeof e?.code === 'string' ? e.code : '';
  const known = (TRANSPORT_ERROR_CODES as Record<string, TransportFailure>)[code];
  if (known) return known;
  if (e?.name === 'AbortError' || e?.name === 'TimeoutError') return 'timeout';
  return 'unreachable';
}

/** The envelope error of a transport failure; `message` is the caller's, in its vendor's words. */
export function transportError(
  failure: TransportFailure,
  upstream: string,
  message: string,
  cause?: unknown,
): GatewayError {
  const c: FailureClass = TRANSPORT_FAILURES[failure];
  return new GatewayError(c.code, { upstream, upstreamCode: c.upstreamCode, message, cause });
}
