import { ERROR_MESSAGE, ERROR_RETRYABLE, ERROR_STATUS, type ErrorCode } from '../core/errors/error-codes.js';
import { buildEnvelope } from '../core/errors/error-envelope.js';
import { GatewayError, type GatewayErrorDetails } from '../core/errors/gateway-error.js';

// The error envelope as OpenAPI: its schemas (with every code), and one shared response per error status.

type Json = Record<string, unknown>;

/** Error answers every gateway operation may give, by status: the codes behind each and an example. */
export const ERROR_RESPONSES: ReadonlyArray<{
  status: number;
  name: string;
  description: string;
  example: { code: ErrorCode; details?: GatewayErrorDetails };
  writesOnly?: boolean;
}> = [
  {
    status: 400,
    name: 'BadRequest',
    description:
      'A parameter is invalid (`error.parameter` names it), or the upstream rejected the parameters.',
    example: {
      code: 'VALIDATION_FAILED',
      details: {
        parameter: 'limit',
        message: 'Invalid parameter "limit": limit must be a whole number from 1 to 100.',
      },
    },
  },
  {
    status: 401,
    name: 'Unauthenticated',
    description: 'No gateway key, or an unknown one.',
    example: { code: 'UNAUTHENTICATED' },
  },
  {
    status: 403,
    name: 'Forbidden',
    description:
      'This consumer may not use this interface or method, or the upstream subscription does not cover it.',
    example: {
      code: 'FORBIDDEN',
      details: { message: 'Consumer "dashboard-web" may not use the macro interface.' },
    },
  },
  {
    status: 404,
    name: 'NotFound',
    description: 'The upstream does not know the entity (or the gateway the route).',
    example: {
      code: 'NOT_FOUND',
      details: {
        upstream: 'macro',
        upstreamStatus: 404,
        upstreamCode: 'NOT_FOUND',
        message: 'The macroeconomic data service does not know the requested entity.',
      },
    },
  },
  {
    status: 413,
    name: 'PayloadTooLarge',
    description: 'The request body is over the gateway limit.',
    example: { code: 'PAYLOAD_TOO_LARGE' },
    writesOnly: true,
  },
  {
    status: 415,
    name: 'UnsupportedFormat',
    description: 'A format other than json or xml was asked for.',
    example: {
      code: 'UNSUPPORTED_FORMAT',
      details: { parameter: 'format', message: 'format must be json or xml.' },
    },
  },
  {
    status: 429,
    name: 'RateLimited',
    description:
      "This consumer's quota (`CONSUMER_RATE_LIMITED`) or the shared upstream budget / an upstream 429 (`UPSTREAM_RATE_LIMITED`): wait `Retry-After` seconds. An upstream answer over the size cap (`RESPONSE_TOO_LARGE`, not retryable, no `Retry-After`): narrow the request.",
    example: {
      code: 'UPSTREAM_RATE_LIMITED',
      details: {
        upstream: 'macro',
        upstreamStatus: 429,
        upstreamCode: 'TOO_MANY_REQUESTS',
        retryAfterSeconds: 30,
        message: 'The macroeconomic data service is rate limiting; retry later.',
      },
    },
  },
  {
    status: 500,
    name: 'Internal',
    description: 'A gateway bug; quote the `requestId`.',
    example: { code: 'INTERNAL' },
  },
  {
    status: 502,
    name: 'UpstreamFailure',
    description:
      "The upstream failed (5xx), sent an unreadable or oversized answer, or rejected the gateway's own key (`UPSTREAM_AUTH_FAILED`, an operator problem).",
    example: {
      code: 'UPSTREAM_ERROR',
      details: {
        upstream: 'macro',
        upstreamStatus: 500,
        message: 'The macroeconomic data service failed to answer the request.',
      },
    },
  },
  {
    status: 503,
    name: 'UpstreamUnavailable',
    description: 'The upstream cannot be reached (refused, reset, breaker open).',
    example: {
      code: 'UPSTREAM_UNAVAILABLE',
      details: {
        upstream: 'macro',
        upstreamCode: 'ECONNREFUSED',
        message: 'The macroeconomic data service could not be reached.',
      },
    },
  },
  {
    status: 504,
    name: 'UpstreamTimeout',
    description: "The upstream did not answer within the route's deadline.",
    example: {
      code: 'UPSTREAM_TIMEOUT',
      details: { upstream: 'macro', message: 'The macroeconomic data service did not answer in time.' },
    },
  },
];

const EXAMPLE_REQUEST_ID = '7f6f2a52-2b1e-4b59-9d59-0d1f3c8f6a10';

function errorExample(code: ErrorCode, details?: GatewayErrorDetails): Json {
  return buildEnvelope(new GatewayError(code, details), EXAMPLE_REQUEST_ID);
}

/** `ErrorCode`, `ErrorBody`, `ErrorEnvelope`, and the shared response of each row of ERROR_RESPONSES. */
export function errorComponents(): { schemas: Json; responses: Json } {
  const codes = Object.keys(ERROR_STATUS) as ErrorCode[];
  const codeTable = codes
    .map(
      (c) => `- \`${c}\` (${ERROR_STATUS[c]}${ERROR_RETRYABLE[c] ? ', retryable' : ''}): ${ERROR_MESSAGE[c]}`,
    )
    .join('\n');
  const schemas: Json = {
    ErrorCode: {
      type: 'string',
      enum: codes,
      description: `Every failure has one of these codes:\n\n${codeTable}`,
    },
    ErrorBody: {
      type: 'object',
      required: ['code', 'message', 'status', 'retryable', 'requestId'],
      properties: {
        code: { $ref: '#/components/schemas/ErrorCode' },
        message: {
          type: 'string',
          description: 'Human-readable; upstream text is cleaned and never contains a key.',
        },
        status: { type: 'integer', description: 'The HTTP status of the answer.' },
        upstream: { type: 'string', description: 'The upstream involved, if any.' },
        upstreamStatus: { type: 'integer', description: "The upstream's own HTTP status." },
        upstreamCode: {
          oneOf: [{ type: 'string' }, { type: 'integer' }],
          description: "The vendor's error code, or the transport's (`ECONNREFUSED`, `RESPONSE_TOO_LARGE`).",
        },
        parameter: { type: 'string', description: 'The request parameter at fault.' },
        retryable: { type: 'boolean', description: 'Whether the same request may succeed later.' },
        retryAfterSeconds: { type: 'integer', description: 'Also sent as `Retry-After`.' },
        requestId: { type: 'string', description: 'Also sent as `x-request-id`; quote it to operators.' },
        traceId: {
          type: 'string',
          description: 'W3C trace id (yours from `traceparent`, or one the gateway started).',
        },
      },
    },
    ErrorEnvelope: {
      type: 'object',
      required: ['error'],
      description:
        'One envelope for every failure (JSON, or XML when XML was asked for). Under `/macro` it also carries the CEIC-shaped `errors: {status, code, message}` object; under the EMIS prefixes `errors: [{code, detail}]`, so vendor clients raise their own exceptions. `error` is the contract for new clients.',
      properties: { error: { $ref: '#/components/schemas/ErrorBody' } },
      additionalProperties: true,
    },
  };
  const responses: Json = {};
  for (const r of ERROR_RESPONSES) {
    const codes = (Object.keys(ERROR_STATUS) as ErrorCode[]).filter((c) => ERROR_STATUS[c] === r.status);
    responses[r.name] = {
      description: `${r.description} Codes: ${codes.map((c) => `\`${c}\``).join(', ')}.`,
      headers: {
        'x-request-id': { $ref: '#/components/headers/RequestId' },
        ...(r.status === 429 ? { 'retry-after': { $ref: '#/components/headers/RetryAfter' } } : {}),
      },
      content: {
        'application/json': {
          schema: { $ref: '#/components/schemas/ErrorEnvelope' },
          example: errorExample(r.example.code, r.example.details),
        },
        'application/xml': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } },
      },
    };
  }
  return { schemas, responses };
}
