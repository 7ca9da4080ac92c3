import type { INestApplication } from '@nestjs/common';
import { SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { ERROR_MESSAGE, ERROR_RETRYABLE, ERROR_STATUS, type ErrorCode } from '../core/errors/error-codes.js';
import { buildEnvelope } from '../core/errors/error-envelope.js';
import { GatewayError, type GatewayErrorDetails } from '../core/errors/gateway-error.js';
import { ROUTE_EXTENSION, type RouteExtension } from './route-docs.decorators.js';
import { SCHEMA_NAME_MARKER } from './schema-name.js';
import { addViewOperations } from '../views/view-docs.js';
import { ViewsRegistry } from '../views/views.registry.js';

/** Version of the gateway's HTTP contract (not of the package): bump it when the surface changes incompatibly. */
export const API_VERSION = '1.0.0';

type Json = Record<string, unknown>;
type Operation = Json & {
  operationId?: string;
  tags?: string[];
  responses?: Record<string, unknown>;
  security?: unknown[];
  description?: string;
  summary?: string;
};

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

/** The consumer-key positions (README "Calling the gateway"), as OpenAPI security schemes. */
const SECURITY_SCHEMES = {
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

const CONSUMER_SECURITY = [{ bearer: [] }, { apiKey: [] }, { token: [] }, { sessionId: [] }];

/** Error answers every gateway operation may give, by status: the codes behind each and an example. */
const ERROR_RESPONSES: ReadonlyArray<{
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
      "This consumer's quota (`CONSUMER_RATE_LIMITED`) or the shared upstream budget / an upstream 429 (`UPSTREAM_RATE_LIMITED`). Wait `Retry-After` seconds.",
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

function errorComponents(): { schemas: Json; responses: Json } {
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

const HEADERS: Json = {
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

const DESCRIPTION = `One front door to the macroeconomic (CEIC v2), company (EMIS v2), document and deal (EMIS) data interfaces.

**Keys.** Send your gateway key as \`Authorization: Bearer <key>\`, \`X-API-Key: <key>\`, or the \`token\` query
parameter (the vendors' own clients keep working with only host and key changed). The gateway removes it and
uses its own vendor key; no vendor key ever reaches you.

**Paths.** Each interface lives under its prefix with the vendor's paths unchanged (\`/macro/feeds\`,
\`/documents/Search/query/\`); \`/news\` and \`/dw\` are aliases of \`/documents\` and \`/deals\`.

**Errors.** Every failure has one envelope, \`{"error": {code, message, status, retryable, requestId, …}}\` (see
\`ErrorEnvelope\`), with \`Retry-After\` on 429s.

**Caching.** Cacheable GETs say how they were served in \`X-Cache\` and \`Age\`; send \`Cache-Control: no-cache\` to
force a fresh answer.`;

function isOperation(v: unknown): v is Operation {
  return typeof v === 'object' && v !== null;
}

/** `MacroLoginController_login` → `macro.login`; `HealthController_live` → `health.live`. */
function handWrittenOperationId(path: string, raw: string | undefined): string {
  const method =
    raw
      ?.split('_')
      .pop()
      ?.replace(/\[\d+\]$/, '') ?? 'op';
  const first = path.split('/').filter(Boolean)[0] ?? 'root';
  return `${first}.${method}`;
}

function stableSortKeys<T>(obj: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(obj).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Moves marked inline schemas (see SCHEMA_NAME_MARKER) to `components.schemas` and refers to them. */
function hoistSchemas(value: unknown, into: Json): unknown {
  if (Array.isArray(value)) return value.map((v) => hoistSchemas(v, into));
  if (typeof value !== 'object' || value === null) return value;
  const obj = value as Json;
  const name = obj[SCHEMA_NAME_MARKER];
  if (typeof name === 'string') {
    const { [SCHEMA_NAME_MARKER]: _omit, ...schema } = obj;
    const hoisted = hoistSchemas(schema, into);
    const existing = into[name];
    if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(hoisted))
      throw new Error(`OpenAPI: two different schemas are named ${name}`);
    into[name] = hoisted;
    return { $ref: `#/components/schemas/${name}` };
  }
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, hoistSchemas(v, into)]));
}

/**
 * The gateway's OpenAPI 3 document, built from the application itself: every controller Nest routes (the
 * generated upstream controllers carry their route facts and docs; hand-written ones are scanned as they
 * are), then completed document-wide: vendor path spellings and alias paths, operation ids equal to route
 * ids, the key positions as security schemes, the error envelope and its codes with examples, and tags per
 * upstream. Deterministic (sorted), so the generated client can be checked for staleness.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const scanned = SwaggerModule.createDocument(
    app,
    { openapi: '3.0.3', info: { title: 'Atrium gateway', description: DESCRIPTION, version: API_VERSION } },
    // Untagged hand-written controllers are tagged by their path (their upstream's tag under its prefix).
    { autoTagControllers: false },
  );
  // The views in force when the document is built (views are data: a reload is in /docs after a restart).
  const views = app.get(ViewsRegistry, { strict: false }).all();
  return addViewOperations(finalizeDocument(scanned), views, CONSUMER_SECURITY);
}

export function finalizeDocument(scanned: OpenAPIObject): OpenAPIObject {
  const schemas: Json = {};
  const paths: Record<string, Record<string, Operation>> = {};
  const tagDescriptions = new Map<string, string | undefined>();
  const prefixOwner = new Map<string, string>();
  const usedIds = new Map<string, number>();

  // First pass: which prefixes belong to which upstream (hand-written routes under them share the tag).
  for (const item of Object.values(scanned.paths ?? {}))
    for (const m of METHODS) {
      const op = (item as Record<string, unknown>)[m];
      if (!isOperation(op)) continue;
      const ext = op[ROUTE_EXTENSION] as RouteExtension | undefined;
      if (ext) for (const p of ext.prefixes) prefixOwner.set(p, ext.upstream);
    }

  const { schemas: errorSchemas, responses: errorResponses } = errorComponents();

  for (const [rawPath, item] of Object.entries(scanned.paths ?? {})) {
    for (const m of METHODS) {
      const found = (item as Record<string, unknown>)[m];
      if (!isOperation(found)) continue;
      const op: Operation = { ...found };
      const ext = op[ROUTE_EXTENSION] as RouteExtension | undefined;
      let path = rawPath;
      const first = rawPath.split('/').filter(Boolean)[0] ?? '';
      if (ext) {
        const { upstreamDescription, ...facts } = ext;
        if (!tagDescriptions.get(ext.upstream)) tagDescriptions.set(ext.upstream, upstreamDescription);
        // The vendor's spelling (trailing slashes, casing) below the prefix the route was served under.
        path = `/${first}${ext.path}`;
        const canonical = first === ext.prefixes[0];
        op.operationId = canonical ? ext.id : `${first}.${ext.id.slice(ext.upstream.length + 1)}`;
        op[ROUTE_EXTENSION] = facts;
        if (!canonical) {
          op['x-atrium-alias-of'] = `/${ext.prefixes[0]}${ext.path}`;
          op.description = [
            `Alias of \`${ext.method} /${ext.prefixes[0]}${ext.path}\` for vendor clients.`,
            op.description,
          ]
            .filter(Boolean)
            .join('\n\n');
        }
        op.tags = [ext.upstream];
        op.security = CONSUMER_SECURITY;
        const responses = { ...(op.responses ?? {}) };
        const ok = responses['200'] as Json | undefined;
        if (ok)
          responses['200'] = {
            ...ok,
            headers: {
              'x-request-id': { $ref: '#/components/headers/RequestId' },
              ...(ext.file || ext.method !== 'GET' || ext.sideEffect
                ? {}
                : {
                    'x-cache': { $ref: '#/components/headers/XCache' },
                    age: { $ref: '#/components/headers/Age' },
                  }),
            },
          };
        for (const r of ERROR_RESPONSES) {
          if (r.writesOnly && ext.method === 'GET') continue;
          responses[String(r.status)] = { $ref: `#/components/responses/${r.name}` };
        }
        op.responses = responses;
      } else {
        op.operationId = handWrittenOperationId(rawPath, op.operationId);
        if (!op.tags || op.tags.length === 0) op.tags = [prefixOwner.get(first) ?? first];
        if (!tagDescriptions.has(op.tags[0])) tagDescriptions.set(op.tags[0], undefined);
        const responses = { ...(op.responses ?? {}) };
        for (const [status, r] of Object.entries(responses))
          if (isOperation(r) && !r.description) responses[status] = { ...r, description: 'Answer.' };
        if (!Object.keys(responses).some((s) => s.startsWith('4') || s.startsWith('5')))
          responses.default = {
            description: 'An error, in the gateway envelope.',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
          };
        op.responses = responses;
      }
      // Unique operation ids (a hand-written route may share a name with another).
      const base = op.operationId;
      const n = usedIds.get(base) ?? 0;
      usedIds.set(base, n + 1);
      if (n > 0) op.operationId = `${base}.${n + 1}`;
      paths[path] = { ...(paths[path] ?? {}), [m]: hoistSchemas(op, schemas) as Operation };
    }
  }

  const sortedPaths = stableSortKeys(
    Object.fromEntries(
      Object.entries(paths).map(([p, ops]) => [
        p,
        Object.fromEntries(METHODS.filter((m) => ops[m]).map((m) => [m, ops[m]])),
      ]),
    ),
  );
  const upstreamTags = [...new Set(prefixOwner.values())].sort();
  const otherTags = [...tagDescriptions.keys()].filter((t) => !upstreamTags.includes(t)).sort();
  const tags = [...upstreamTags, ...otherTags].map((name) => {
    const description = tagDescriptions.get(name);
    return description ? { name, description } : { name };
  });

  const scannedComponents = (scanned.components ?? {}) as Json;
  return {
    openapi: scanned.openapi,
    info: scanned.info,
    tags,
    paths: sortedPaths,
    components: {
      ...scannedComponents,
      securitySchemes: SECURITY_SCHEMES as unknown as Json,
      headers: HEADERS,
      schemas: stableSortKeys({
        ...((scannedComponents.schemas as Json | undefined) ?? {}),
        ...errorSchemas,
        ...schemas,
      }),
      responses: errorResponses,
    },
  } as OpenAPIObject;
}
