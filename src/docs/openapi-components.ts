// Definitions every gateway operation shares: how a consumer key is presented, and the response headers.

type Json = Record<string, unknown>;

/** The consumer-key positions (README "Calling the gateway"), as OpenAPI security schemes. */
export const SECURITY_SCHEMES = {
  bearer: {
    type: 'http',
    scheme: 'bearer',
    description:
      'Your gateway key: `Authorization: Bearer <key>`. CEIC clients may send the key raw (`Authorization: <key>`); that works too.',
  },
  apiKey: {
    type: 'apiKey',
    in: 'header',
    name: 'X-API-Key',
    description: 'Your gateway key in `X-API-Key`.',
  },
  token: {
    type: 'apiKey',
    in: 'query',
    name: 'token',
    description:
      'Your gateway key as the `token` query parameter (CEIC and EMIS clients). `token=None` counts as none.',
  },
  sessionId: {
    type: 'apiKey',
    in: 'query',
    name: 'sessionId',
    description:
      'Your gateway key as `sessionId` (what the EMIS client sends after its login, answered by the gateway).',
  },
  metricsToken: {
    type: 'http',
    scheme: 'bearer',
    description: '`ATRIUM_METRICS_TOKEN`, when the operator set one (not a consumer key).',
  },
} as const;

export const CONSUMER_SECURITY = [{ bearer: [] }, { apiKey: [] }, { token: [] }, { sessionId: [] }];

/** Response headers the operations refer to (`#/components/headers/…`). */
export const HEADERS: Json = {
  RequestId: {
    description: 'The request id: yours if you sent a sane `x-request-id`, else a fresh UUID.',
    schema: { type: 'string' },
  },
  RetryAfter: { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } },
  XCache: {
    description:
      'How the answer was served: from cache (HIT, STALE), shared with an identical call in flight (COALESCED), fetched (MISS), or never cacheable (BYPASS).',
    schema: { type: 'string', enum: ['HIT', 'MISS', 'STALE', 'COALESCED', 'BYPASS'] },
  },
  Age: { description: 'Seconds since a cached answer was fetched.', schema: { type: 'integer' } },
};
