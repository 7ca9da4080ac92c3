import { ERROR_MESSAGE, ERROR_RETRYABLE, ERROR_STATUS, type ErrorCode } from './error-codes.js';

export interface GatewayErrorDetails {
  message?: string;
  upstream?: string;
  upstreamStatus?: number;
  upstreamCode?: string | number;
  retryAfterSeconds?: number;
  /** The request parameter at fault (validation). */
  parameter?: string;
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
    this.fromUpstream = details.fromUpstream ?? false;
  }
}

export function isGatewayError(e: unknown): e is GatewayError {
  return e instanceof GatewayError;
}
