import { ERROR_MESSAGE, ERROR_RETRYABLE, ERROR_STATUS, type ErrorCode } from './error-codes.js';

export interface GatewayErrorDetails {
  message?: string;
  upstream?: string;
  upstreamStatus?: number;
  upstreamCode?: string | number;
  retryAfterSeconds?: number;
  /** The request parameter at fault (validation). */
  parameter?: string;
  /** `WWW-Authenticate` of a 401 (RFC 6750 `error`, `error_description`); absent → the plain challenge. */
  authChallenge?: string;
  /** Marks an error that came from a real upstream answer (as opposed to the gateway's own decision). */
  fromUpstream?: boolean;
  cause?: unknown;
}

/** The one error type every stage throws; the global filter turns it into the envelope. */
export class GatewayError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly retryable: boolean;
  readonly upstream?: string;
  readonly upstreamStatus?: number;
  readonly upstreamCode?: string | number;
  readonly retryAfterSeconds?: number;
  readonly parameter?: string;
  readonly authChallenge?: string;
  readonly fromUpstream: boolean;

  constructor(code: ErrorCode, details: GatewayErrorDetails = {}) {
    super(
      details.message ?? ERROR_MESSAGE[code],
      details.cause === undefined ? undefined : { cause: details.cause },
    );
    this.name = 'GatewayError';
    this.code = code;
    this.status = ERROR_STATUS[code];
    this.retryable = ERROR_RETRYABLE[code];
    this.upstream = details.upstream;
    this.upstreamStatus = details.upstreamStatus;
    this.upstreamCode = details.upstreamCode;
    this.retryAfterSeconds = details.retryAfterSeconds;
    this.parameter = details.parameter;
    this.authChallenge = details.authChallenge;
    this.fromUpstream = details.fromUpstream ?? false;
  }

  /**
   * An expected, high-rate rejection (consumer quota, upstream cooldown, open breaker, a full fair queue):
   * the same error without a captured stack trace. Capturing one costs more than the rest of such a
   * rejection, and its stack says nothing (the code and message do). Built without running the Error
   * constructor, so no global (`Error.stackTraceLimit`) is touched; `stack` is a fixed line.
   */
  static expected(code: ErrorCode, details: Omit<GatewayErrorDetails, 'cause'> = {}): GatewayError {
    const e = Object.create(GatewayError.prototype) as GatewayError;
    const message = details.message ?? ERROR_MESSAGE[code];
    // Own, non-enumerable, as the Error constructor leaves them.
    Object.defineProperty(e, 'message', { value: message, writable: true, configurable: true });
    Object.defineProperty(e, 'stack', {
      value: `GatewayError: ${message}\n    (expected rejection: no stack captured)`,
      writable: true,
      configurable: true,
    });
    const fields: Omit<GatewayError, keyof Error> & { name: string } = {
      name: 'GatewayError',
      code,
      status: ERROR_STATUS[code],
      retryable: ERROR_RETRYABLE[code],
      upstream: details.upstream,
      upstreamStatus: details.upstreamStatus,
      upstreamCode: details.upstreamCode,
      retryAfterSeconds: details.retryAfterSeconds,
      parameter: details.parameter,
      authChallenge: details.authChallenge,
      fromUpstream: details.fromUpstream ?? false,
    };
    return Object.assign(e, fields);
  }

  /**
   * An expected rejection that one instance answers for many requests (the limiter's cooldown and breaker
   * refusals, per whole second of `Retry-After`): nobody may change it after this, and the exception
   * filter serialises its envelope once and fills in each request's ids (envelope-template.ts).
   */
  static shared(code: ErrorCode, details: Omit<GatewayErrorDetails, 'cause'> = {}): GatewayError {
    const e = GatewayError.expected(code, details);
    SHARED.add(e);
    return e;
  }
}

/** Errors built by `GatewayError.shared` (a set beside them: their own keys stay those of any GatewayError). */
const SHARED = new WeakSet<GatewayError>();

/** Whether `err` answers many requests (`GatewayError.shared`). */
export function isSharedError(err: GatewayError): boolean {
  return SHARED.has(err);
}

export function isGatewayError(e: unknown): e is GatewayError {
  return e instanceof GatewayError;
}
