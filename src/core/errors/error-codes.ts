/** Every failure the gateway reports has one of these codes; README "Errors" lists them for consumers. */
export type ErrorCode =
  | 'VALIDATION_FAILED'
  | 'UPSTREAM_BAD_REQUEST'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'UPSTREAM_FORBIDDEN'
  | 'NOT_FOUND'
  | 'UPSTREAM_NOT_CONFIGURED'
  | 'METHOD_NOT_ALLOWED'
  | 'REQUEST_TIMEOUT'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'URI_TOO_LONG'
  | 'UNSUPPORTED_FORMAT'
  | 'CONSUMER_RATE_LIMITED'
  | 'UPSTREAM_RATE_LIMITED'
  | 'RESPONSE_TOO_LARGE'
  | 'WATCH_LIMIT_REACHED'
  | 'HEADERS_TOO_LARGE'
  | 'INTERNAL'
  | 'UPSTREAM_AUTH_FAILED'
  | 'UPSTREAM_ERROR'
  | 'UPSTREAM_UNAVAILABLE'
  | 'WATCH_STREAMS_FULL'
  | 'UPSTREAM_TIMEOUT';

/** Code → HTTP status. `satisfies` makes a new code without a status a compile error. */
export const ERROR_STATUS = {
  VALIDATION_FAILED: 400,
  UPSTREAM_BAD_REQUEST: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  UPSTREAM_FORBIDDEN: 403,
  NOT_FOUND: 404,
  UPSTREAM_NOT_CONFIGURED: 404,
  METHOD_NOT_ALLOWED: 405,
  REQUEST_TIMEOUT: 408,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  UNSUPPORTED_FORMAT: 415,
  CONSUMER_RATE_LIMITED: 429,
  UPSTREAM_RATE_LIMITED: 429,
  // The vendor's own status for an exceeded limit (its answer size included), but never retryable.
  RESPONSE_TOO_LARGE: 429,
  WATCH_LIMIT_REACHED: 429,
  HEADERS_TOO_LARGE: 431,
  INTERNAL: 500,
  UPSTREAM_AUTH_FAILED: 502,
  UPSTREAM_ERROR: 502,
  UPSTREAM_UNAVAILABLE: 503,
  WATCH_STREAMS_FULL: 503,
  UPSTREAM_TIMEOUT: 504,
} as const satisfies Record<ErrorCode, number>;

/** Whether a consumer may usefully retry the same request later. */
export const ERROR_RETRYABLE = {
  VALIDATION_FAILED: false,
  UPSTREAM_BAD_REQUEST: false,
  UNAUTHENTICATED: false,
  FORBIDDEN: false,
  UPSTREAM_FORBIDDEN: false,
  NOT_FOUND: false,
  UPSTREAM_NOT_CONFIGURED: false,
  METHOD_NOT_ALLOWED: false,
  REQUEST_TIMEOUT: false,
  CONFLICT: false,
  PAYLOAD_TOO_LARGE: false,
  URI_TOO_LONG: false,
  UNSUPPORTED_FORMAT: false,
  CONSUMER_RATE_LIMITED: true,
  UPSTREAM_RATE_LIMITED: true,
  RESPONSE_TOO_LARGE: false,
  // Once the consumer closes another stream.
  WATCH_LIMIT_REACHED: true,
  HEADERS_TOO_LARGE: false,
  INTERNAL: false,
  UPSTREAM_AUTH_FAILED: false,
  UPSTREAM_ERROR: true,
  UPSTREAM_UNAVAILABLE: true,
  WATCH_STREAMS_FULL: true,
  UPSTREAM_TIMEOUT: true,
} as const satisfies Record<ErrorCode, boolean>;

/** Default messages; callers pass a more specific one where they know more. */
export const ERROR_MESSAGE = {
  VALIDATION_FAILED: 'A request parameter is invalid.',
  UPSTREAM_BAD_REQUEST: 'The data service rejected the request parameters.',
  UNAUTHENTICATED: 'A valid gateway key is required (Authorization: Bearer <key>, X-API-Key or token).',
  FORBIDDEN: 'This consumer may not use this interface or method.',
  UPSTREAM_FORBIDDEN: 'The subscription does not cover this data.',
  NOT_FOUND: 'Not found.',
  UPSTREAM_NOT_CONFIGURED: 'This deployment does not serve this interface.',
  METHOD_NOT_ALLOWED: 'This method is not allowed on this path.',
  REQUEST_TIMEOUT: 'The request was not received in time.',
  CONFLICT: 'The request conflicts with the current state of the resource.',
  PAYLOAD_TOO_LARGE: 'The request body is too large.',
  URI_TOO_LONG: 'The request URL is too long.',
  UNSUPPORTED_FORMAT: 'Only json and xml are supported.',
  CONSUMER_RATE_LIMITED: 'This consumer has exceeded its request quota; retry later.',
  UPSTREAM_RATE_LIMITED: 'The data service is rate limiting; retry later.',
  RESPONSE_TOO_LARGE:
    'The answer is over the size limit; narrow the request (paging, filters, dates): the same request fails again.',
  WATCH_LIMIT_REACHED:
    'This consumer already watches as many paths as it may; close a stream (or watch fewer paths) first.',
  HEADERS_TOO_LARGE: 'The request headers are too large.',
  INTERNAL: 'An internal gateway error occurred.',
  UPSTREAM_AUTH_FAILED: "The data service rejected the gateway's credentials; operators have been alerted.",
  UPSTREAM_ERROR: 'The data service failed or sent an unreadable answer.',
  UPSTREAM_UNAVAILABLE: 'The data service is unavailable.',
  UPSTREAM_TIMEOUT: 'The data service did not answer in time.',
  WATCH_STREAMS_FULL: 'This gateway replica holds as many watch streams as it may; retry shortly.',
} as const satisfies Record<ErrorCode, string>;
