import fc from 'fast-check';
import { loadConfig } from '../../src/config/atrium-config.js';
import { CONSUMER_KEY_HEADERS, CONSUMER_KEY_QUERY_PARAMS } from '../../src/core/auth/consumer.js';
import { GatewayError } from '../../src/core/errors/gateway-error.js';
import { parseQuery } from '../../src/core/http/query-string.js';
import { SecretRedactor } from '../../src/core/logging/secret-redactor.js';
import { cacheKeyOf } from '../../src/proxy/cache/cache-key.js';
import type { ProxyRequest, RouteDefinition } from '../../src/proxy/pipeline.types.js';
import {
  buildProxyRequest,
  compileRoute,
  requestHeadersOf,
  type ProxyCall,
} from '../../src/proxy/request-builder.js';
import { credentialsStage } from '../../src/proxy/stages/credentials.stage.js';
import type { UpstreamDefinition } from '../../src/proxy/upstream-definition.js';
import { upstreamDefinitionOf } from '../../src/upstreams/upstream-declaration.js';
import { testConsumer } from '../helpers/consumers.js';
import { UPSTREAMS } from '../../src/upstreams/index.js';

// Issue 12 item 4: a route's cache key is derived from what is sent upstream. Over every GET route of the
// four route tables: two requests that reach the upstream differently never share a key, and two that reach
// it identically do.

const config = loadConfig(
  {
    UPSTREAM_MACRO_BASE_URL: 'http://127.0.0.1:9',
    UPSTREAM_MACRO_TOKEN: 'sbx_macro_key_prop_0001',
    UPSTREAM_COMPANY_BASE_URL: 'http://127.0.0.1:9',
    UPSTREAM_COMPANY_TOKEN: 'sbx_company_key_prop_0001',
    UPSTREAM_DOCUMENTS_BASE_URL: 'http://127.0.0.1:9',
    UPSTREAM_DOCUMENTS_TOKEN: 'sbx_documents_key_prop_0001',
    UPSTREAM_DEALS_BASE_URL: 'http://127.0.0.1:9',
    UPSTREAM_DEALS_TOKEN: 'sbx_deals_key_prop_0001',
  },
  UPSTREAMS,
);
const redactor = new SecretRedactor();
const DEFS: UpstreamDefinition[] = UPSTREAMS.map((u) => upstreamDefinitionOf(u, config, { redactor }));
const GET_ROUTES: Array<{ def: UpstreamDefinition; route: RouteDefinition }> = DEFS.flatMap((def) =>
  def.routes.filter((route) => route.method === 'GET').map((route) => ({ def, route })),
);
const BY_ID = new Map(GET_ROUTES.map((r) => [r.route.id, r]));
const app = testConsumer({ id: 'prop-app' });

/** What a consumer sends: small pools, so that equal and different upstream calls both come up often. */
interface ClientRequest {
  id: string;
  lang?: string;
  format?: string;
  extra?: string;
  keyIn: 'bearer' | 'x-api-key' | 'token' | 'sessionId';
  accept?: string;
  acceptLanguage?: string;
}

const clientRequest: fc.Arbitrary<ClientRequest> = fc.record({
  id: fc.constantFrom('A1', 'B2'),
  lang: fc.constantFrom(undefined, 'en', 'zh', 'EN', ''),
  format: fc.constantFrom(undefined, 'json', 'xml', 'JSON'),
  extra: fc.constantFrom(undefined, 'audit=90', 'audit=30', 'limit=2'),
  keyIn: fc.constantFrom('bearer', 'x-api-key', 'token', 'sessionId'),
  accept: fc.constantFrom(undefined, 'application/json', 'application/xml', '*/*'),
  acceptLanguage: fc.constantFrom(undefined, 'en', 'zh', 'zh-CN,zh;q=0.9'),
});

let requestNo = 0;

function proxyCall(route: RouteDefinition, c: ClientRequest): ProxyCall {
  const parts: string[] = [];
  if (c.lang !== undefined) parts.push(`lang=${c.lang}`);
  if (c.format !== undefined) parts.push(`format=${c.format}`);
  if (c.extra !== undefined) parts.push(c.extra);
  if (c.keyIn === 'token' || c.keyIn === 'sessionId') parts.push(`${c.keyIn}=${app.key}`);
  const qs = parts.join('&');
  const headers: Record<string, string> = {};
  if (c.keyIn === 'bearer') headers.authorization = `Bearer ${app.key}`;
  if (c.keyIn === 'x-api-key') headers['x-api-key'] = app.key;
  if (c.accept) headers.accept = c.accept;
  if (c.acceptLanguage) headers['accept-language'] = c.acceptLanguage;
  const params: Record<string, string> = {};
  for (const m of route.path.matchAll(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g)) params[m[1]] = c.id;
  return {
    route,
    consumer: app.consumer,
    query: parseQuery(qs),
    headers: requestHeadersOf(headers),
    params,
    requestId: `prop-${requestNo++}`,
  };
}

/** The cache key, and the request exactly as the upstream receives it (tracing header aside). */
async function keyAndUpstreamView(
  def: UpstreamDefinition,
  route: RouteDefinition,
  c: ClientRequest,
): Promise<{ key: string; view: string } | undefined> {
  let req: ProxyRequest;
  try {
    req = buildProxyRequest(compileRoute(def, route), proxyCall(route, c));
  } catch (e) {
    if (e instanceof GatewayError) return undefined; // refused before any upstream call: nothing to cache
    throw e;
  }
  const key = cacheKeyOf(req, { family: route.family }).full;
  let seen: ProxyRequest | undefined;
  const send = credentialsStage({
    credentials: def.credentials,
    stripParams: CONSUMER_KEY_QUERY_PARAMS,
    stripHeaders: CONSUMER_KEY_HEADERS,
  })(async (r) => {
    seen = r;
    return { status: 200, headers: {}, body: Buffer.alloc(0) };
  });
  await send(req);
  const { 'x-request-id': _tracing, ...headers } = seen!.headers;
  const sortedHeaders = Object.entries(headers).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  const view = JSON.stringify([seen!.method, seen!.path, seen!.query, sortedHeaders, seen!.body ?? null]);
  return { key, view };
}

describe('cache keys hold every input that changes an answer', () => {
  it('covers every GET route of the four route tables', () => {
    expect(new Set(GET_ROUTES.map((r) => r.def.name))).toEqual(
      new Set(['macro', 'company', 'documents', 'deals']),
    );
  });

  it('two requests share a key exactly when they reach the upstream identically', async () => {
    await fc.assert(
      // Route ids, not definitions: a counterexample stays readable.
      fc.asyncProperty(
        fc.constantFrom(...GET_ROUTES.map((r) => r.route.id)),
        clientRequest,
        clientRequest,
        async (id, a, b) => {
          const r = BY_ID.get(id)!;
          const x = await keyAndUpstreamView(r.def, r.route, a);
          const y = await keyAndUpstreamView(r.def, r.route, b);
          if (!x || !y) return;
          if (x.view === y.view) expect([r.route.id, x.key]).toEqual([r.route.id, y.key]);
          else expect([r.route.id, x.key]).not.toEqual([r.route.id, y.key]);
        },
      ),
      { numRuns: 3000 },
    );
  });

  it('the example of the issue: /company/dictionary/periods with and without lang=zh', async () => {
    const route = GET_ROUTES.find((r) => r.def.name === 'company' && r.route.path === '/dictionary/periods');
    expect(route).toBeDefined();
    const plain = await keyAndUpstreamView(route!.def, route!.route, {
      id: 'A1',
      extra: 'audit=90',
      keyIn: 'bearer',
    });
    const zh = await keyAndUpstreamView(route!.def, route!.route, {
      id: 'A1',
      extra: 'audit=90',
      lang: 'zh',
      keyIn: 'bearer',
    });
    expect(plain!.key).not.toBe(zh!.key);
    const header = await keyAndUpstreamView(route!.def, route!.route, {
      id: 'A1',
      extra: 'audit=90',
      acceptLanguage: 'zh',
      keyIn: 'bearer',
    });
    // Accept-Language reaches the company interface, and so the key.
    expect(JSON.parse(header!.view)[3]).toContainEqual(['accept-language', 'zh']);
    expect(header!.key).not.toBe(plain!.key);
  });
});
