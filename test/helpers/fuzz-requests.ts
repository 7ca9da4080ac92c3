import fc from 'fast-check';
import type { RouteDefinition } from '../../src/proxy/pipeline.types.js';
import { UPSTREAM_NAMES, UPSTREAMS, type UpstreamName } from '../../src/upstreams/index.js';

/**
 * Generators of hostile requests for the fuzz suite, built as raw bytes (nothing a client library would
 * tidy). A request carries the placeholder `{RID}` where its x-request-id goes (filled in when sent), and
 * plants `EVILx…` values only where a vendor's stack would read a credential, so any `EVILx` at a vendor
 * is a consumer credential that got through.
 */

export interface FuzzRequest {
  /** Category, for the report. */
  kind: string;
  method: string;
  /** Request line and headers (latin1: every byte is exactly one char), ending with the empty line. */
  head: string;
  body: Buffer;
  /** Framing-level oddities: sent alone on a connection, never pipelined with others. */
  dirty: boolean;
  /** Answers the bytes ask for (2 when they hold a second, complete request). */
  expect: number;
  /** Paths of the items of a `POST /batch` whose body parses (for the escape checks). */
  batchItems?: string[];
}

export interface FuzzContext {
  key: string;
  /** host:port of the trap server: no request may ever reach it. */
  trap: string;
  adminToken: string;
  operatorToken: string;
  metricsToken: string;
  bodyLimit: number;
  /** End-user tokens (JWT shapes) to send; absent → none. */
  tokens?: FuzzTokens;
}

/** Tokens made with real keys before the run (signing is asynchronous; generators are not). */
export interface FuzzTokens {
  /** The issuer and audience a consumer accepts tokens for. */
  issuer: string;
  audience: string;
  /** The provider's current `kid`. */
  kid: string;
  /** Tokens the gateway accepts. */
  valid: readonly string[];
  /**
   * Signed tokens it must refuse (alg none, HMAC keyed with the public key, expired, not yet valid, wrong
   * issuer or audience, another provider's key, an embedded `jwk`, a `jku` to the trap…), by name.
   */
  refused: Readonly<Record<string, string>>;
}

export const EVIL = 'EVILx';

type Iface = UpstreamName;
const PREFIXES = Object.fromEntries(UPSTREAMS.map((u) => [u.name, u.prefixes])) as Record<
  Iface,
  readonly string[]
>;
const ROUTES = Object.fromEntries(UPSTREAMS.map((u) => [u.name, u.routes])) as Record<
  Iface,
  readonly RouteDefinition[]
>;

/** The interface a gateway path names by its first segment (what a batch item must stay inside). */
export function namedInterface(path: string): Iface | undefined {
  const first = path
    .split('?')[0]
    .split('/')
    .filter((s) => s !== '')[0];
  for (const [iface, prefixes] of Object.entries(PREFIXES))
    if (prefixes.includes(first)) return iface as Iface;
  return undefined;
}

const evilValue = fc.stringMatching(/^[A-Za-z0-9]{6}$/).map((s) => EVIL + s);

/** Dot segments and separators in every encoding a server or a vendor might decode. */
const TRAVERSALS = [
  '..',
  '.',
  '%2e%2e',
  '%2E%2E',
  '.%2e',
  '%2e.',
  '%252e%252e',
  '..%2f',
  '..%2F..%2F',
  '%2f',
  '%5c',
  '..%5c',
  '..\\..\\',
  '\\..',
  '%c0%ae%c0%ae',
  '%e0%80%ae%e0%80%ae',
  '%c0%af',
  '.%00.',
  '..%00',
  '..;',
  ';/..',
  '....//',
  '..%252f',
  '%u002e%u002e',
  '%2e%2e%5c',
] as const;

const INVALID_UTF8 = ['%ff', '%fe%ff', '%c3%28', '%e2%82', '%ed%a0%80', '%f8%88%80%80%80', '%80', '%c0%80'];
const CONTROL = ['%00', '%0d%0a', '%0a', '%0d', '%09', '%7f', '%0d%0aX-Injected:%20yes'];

/** Gateway endpoints that are not proxy routes: batch items must never reach them. */
const NON_PROXY = [
  'health/ready',
  'health/live',
  'metrics',
  'admin/cache',
  'console/api/state',
  'console',
  'docs/json',
  'batch',
];

export function arbitraries(ctx: FuzzContext) {
  const hostTricks = [
    `@${ctx.trap}`,
    `%40${ctx.trap}`,
    ctx.trap,
    `http:%2F%2F${ctx.trap}`,
    `%2F%2F${ctx.trap}`,
    `x@${ctx.trap}`,
    `http://${ctx.trap}/x`,
  ];

  const text = fc.oneof(
    fc.string({ maxLength: 40 }),
    fc.string({ unit: 'grapheme', maxLength: 20 }),
    fc.constantFrom('__proto__', 'constructor', 'prototype', 'None', 'null', '[]', '{}', "'", '"', '<x>'),
  );
  const encodedText = text.map((s) => encodeURIComponent(s));
  const overlong = fc.integer({ min: 1_000, max: 12_000 }).map((n) => 'a'.repeat(n));

  /** A path parameter value, already as it goes on the wire. */
  const segment = fc.oneof(
    { weight: 10, arbitrary: fc.constantFrom('TB1207', '123', '1%2C2', 'ABC-1', '900001', 'F1', 'UD-1') },
    { weight: 3, arbitrary: fc.constantFrom(...TRAVERSALS) },
    { weight: 1, arbitrary: fc.constantFrom(...INVALID_UTF8) },
    { weight: 1, arbitrary: fc.constantFrom(...CONTROL) },
    { weight: 2, arbitrary: fc.constantFrom(...hostTricks) },
    { weight: 2, arbitrary: encodedText },
    { weight: 1, arbitrary: overlong },
  );

  /** A credential parameter name as a vendor stack would still read it (case, `[]`, leading spaces, escapes). */
  const credentialName = fc
    .tuple(
      fc.constantFrom('token', 'sessionId'),
      fc.constantFrom('asis', 'upper', 'lower', 'title', 'escaped'),
      fc.constantFrom('', '', '[]', '[0]', '[x]', '%5B%5D', '%5B0%5D'),
      fc.constantFrom('', '', '%20', '+', '%20%20', '++'),
    )
    .map(([base, kase, suffix, lead]) => {
      let name: string =
        kase === 'upper'
          ? base.toUpperCase()
          : kase === 'lower'
            ? base.toLowerCase()
            : kase === 'title'
              ? base[0].toUpperCase() + base.slice(1)
              : base;
      if (kase === 'escaped') name = `%${name.charCodeAt(0).toString(16)}${name.slice(1)}`;
      return lead + name + suffix;
    });

  const normalParam = fc.constantFrom(
    'limit',
    'offset',
    'lang',
    'format',
    'keyword',
    'countries[0]',
    'countries[]',
    'filter_id',
    'status',
    'created_after',
    'with_model_information',
    'id',
    'company_name',
    'fields',
  );
  const normalValue = fc.oneof(
    fc.constantFrom(
      '2',
      '0',
      '-1',
      '101',
      'en',
      'zh',
      'xx',
      'json',
      'xml',
      'csv',
      'PL',
      'bank',
      'true',
      'False',
      '2024-01-01',
      'ACTIVE',
    ),
    encodedText,
    fc.constantFrom(...TRAVERSALS, ...INVALID_UTF8, ...CONTROL, ...hostTricks),
    overlong,
  );
  /** A gateway secret: this consumer's key, another key's shape, the sandbox's operator shape, the tokens. */
  const gatewayKey = fc.oneof(
    fc.constant(ctx.key),
    fc.stringMatching(/^[A-Za-z0-9_-]{43}$/).map((s) => `atr_${s}`),
    fc.stringMatching(/^[A-Za-z0-9_-]{24}$/).map((s) => `atr_op_${s}`),
    fc.constant(ctx.operatorToken),
    fc.constant(ctx.metricsToken),
  );
  /** A field name anything may be called (credential-like or not). */
  const anyName = fc.oneof(
    normalParam,
    fc.constantFrom('access_token', 'Authorization', 'x-api-key', 'api_key', 'username', 'password', 'q'),
    fc.stringMatching(/^[a-z][a-zA-Z0-9_]{0,11}$/),
  );
  const queryPair = fc.oneof(
    {
      weight: 2,
      arbitrary: fc
        .tuple(anyName, gatewayKey)
        .filter(([k]) => !/^(token|sessionid)$/i.test(k))
        .map(([k, v]) => `${k}=${encodeURIComponent(v)}`),
    },
    { weight: 6, arbitrary: fc.tuple(normalParam, normalValue).map(([k, v]) => `${k}=${v}`) },
    { weight: 3, arbitrary: fc.tuple(credentialName, evilValue).map(([k, v]) => `${k}=${v}`) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '__proto__[polluted]=yes',
        '__proto__.polluted=yes',
        'constructor[prototype][polluted]=yes',
        'constructor=x',
        '__proto__=x',
        '=x',
        '&&&',
        'a=1&a=2&a[]=3',
        'token',
        'token=None',
        'token=',
      ),
    },
    { weight: 1, arbitrary: fc.tuple(encodedText, encodedText).map(([k, v]) => `${k}=${v}`) },
  );
  const query = fc.array(queryPair, { maxLength: 6 });

  /** Where the consumer's real key travels (or is missing, or wrong), and credentials planted beside it. */
  const authPlacement = fc.oneof(
    {
      weight: 3,
      arbitrary: fc.constant({ headers: [`Authorization: Bearer ${ctx.key}`], query: [] as string[] }),
    },
    { weight: 2, arbitrary: fc.constant({ headers: [`X-API-Key: ${ctx.key}`], query: [] as string[] }) },
    { weight: 1, arbitrary: fc.constant({ headers: [`authorization: ${ctx.key}`], query: [] as string[] }) },
    {
      weight: 1,
      arbitrary: fc.constant({ headers: [`AUTHORIZATION:   bearer   ${ctx.key}  `], query: [] as string[] }),
    },
    { weight: 2, arbitrary: fc.constant({ headers: [] as string[], query: [`token=${ctx.key}`] }) },
    { weight: 1, arbitrary: fc.constant({ headers: [] as string[], query: [`sessionId=${ctx.key}`] }) },
    {
      weight: 1,
      arbitrary: fc.constant({ headers: [] as string[], query: [`token=${ctx.key}`, `token=${ctx.key}`] }),
    },
    {
      weight: 1,
      arbitrary: evilValue.map((e) => ({
        headers: [`Authorization: Bearer ${ctx.key}`, `X-Auth-Token: ${e}`],
        query: [] as string[],
      })),
    },
    {
      weight: 1,
      arbitrary: evilValue.map((e) => ({ headers: [`X-API-Key: ${e}`], query: [`token=${ctx.key}`] })),
    },
    { weight: 1, arbitrary: evilValue.map((e) => ({ headers: [] as string[], query: [`token=${e}`] })) },
    { weight: 1, arbitrary: fc.constant({ headers: [] as string[], query: [] as string[] }) },
    {
      weight: 1,
      arbitrary: fc.constant({ headers: ['Authorization: Basic dXNlcjpwYXNz'], query: [] as string[] }),
    },
  );

  const extraHeader = fc.oneof(
    fc.constantFrom(
      'Accept: application/json',
      'Accept: application/xml',
      'Accept: */*',
      'Accept: text/html',
      'Accept: application/json;q=0, application/xml;q=0',
      'Accept-Language: zh;q=0.9, xx',
      'Accept-Language: ' + 'x'.repeat(500),
      'Cache-Control: no-cache',
      `Host: ${ctx.trap}`,
      `X-Forwarded-Host: ${ctx.trap}`,
      `Forwarded: host=${ctx.trap};proto=http`,
      'X-Original-URL: /admin/cache',
      'X-Rewrite-URL: /metrics',
      'X-HTTP-Method-Override: DELETE',
      'X-Request-Id: ../../etc',
      'Origin: http://evil.invalid',
      'Content-Type: application/json',
      'Expect: 100-continue',
      'Connection: keep-alive',
    ),
    evilValue.map((e) => `X-API-Key: ${e}`),
    evilValue.map((e) => `Cookie: token=${e}; sessionId=${e}`),
    evilValue.map((e) => `X-Token: ${e}`),
  );

  /** Request line and headers for a clean request (well-formed HTTP, odd content). */
  const build = (
    kind: string,
    method: string,
    target: string,
    headers: readonly string[],
    body: Buffer = Buffer.alloc(0),
    contentType?: string,
  ): FuzzRequest => {
    const lines = [`${method} ${target} HTTP/1.1`];
    // A fuzzed Host replaces ours; the request id slot stays unless a header sets its own.
    if (!headers.some((h) => /^host:/i.test(h))) lines.push('Host: 127.0.0.1');
    lines.push(...headers);
    if (!headers.some((h) => /^x-request-id:/i.test(h))) lines.push('X-Request-Id: {RID}');
    if (contentType !== undefined) lines.push(`Content-Type: ${contentType}`);
    if (body.length > 0 || method === 'POST' || method === 'PATCH')
      lines.push(`Content-Length: ${body.length}`);
    return { kind, method, head: lines.join('\r\n') + '\r\n\r\n', body, dirty: false, expect: 1 };
  };

  const fillPath = (route: RouteDefinition, prefix: string, seg: string[]): string => {
    let i = 0;
    return `/${prefix}` + route.path.replace(/\{[A-Za-z_]+\}/g, () => seg[i++ % seg.length]);
  };

  const iface = fc.constantFrom<Iface>(...UPSTREAM_NAMES);
  const routeOf = (want: (r: RouteDefinition) => boolean) =>
    iface.chain((name) =>
      fc.tuple(
        fc.constant(name),
        fc.constantFrom(...ROUTES[name].filter(want)),
        fc.constantFrom(...PREFIXES[name]),
      ),
    );

  const withQuery = (path: string, pairs: readonly string[]) =>
    pairs.length ? `${path}?${pairs.join('&')}` : path;

  /** GETs of every interface's routes, odd parameters, query and headers. */
  const proxyGet = fc
    .tuple(
      routeOf((r) => r.method === 'GET'),
      fc.array(segment, { minLength: 1, maxLength: 3 }),
      query,
      authPlacement,
      fc.array(extraHeader, { maxLength: 3 }),
    )
    .map(([[, route, prefix], seg, q, a, extra]) =>
      build(`GET ${route.id}`, 'GET', withQuery(fillPath(route, prefix, seg), [...q, ...a.query]), [
        ...a.headers,
        ...extra,
      ]),
    );

  /** A write body: form or JSON, credentials (any case, `[]`, leading spaces) planted at its top level. */
  const writeBody = fc
    .tuple(
      fc.array(fc.tuple(credentialName, evilValue), { maxLength: 3 }),
      fc.array(fc.tuple(normalParam, fc.string({ maxLength: 12 })), { maxLength: 3 }),
      fc.constantFrom('form', 'json', 'json-proto', 'raw'),
      // A gateway key planted under a generated path of field names, at any depth.
      fc.option(fc.tuple(fc.array(anyName, { minLength: 1, maxLength: 6 }), gatewayKey), { nil: undefined }),
      fc.constantFrom(
        'application/x-www-form-urlencoded',
        'application/json',
        'application/json; charset=utf-8',
        'text/plain',
        'multipart/form-data; boundary=zz',
        'application/x-www-form-urlencoded; charset=iso-8859-1',
        undefined,
      ),
    )
    .map(([creds, fields, shape, planted, contentType]) => {
      let text: string;
      if (shape === 'form')
        text = [
          ...creds.map(([k, v]) => `${k}=${v}`),
          ...fields.map(([k, v]) => `${k}=${encodeURIComponent(v)}`),
          ...(planted ? [`${planted[0].join('.')}=${encodeURIComponent(planted[1])}`] : []),
        ].join('&');
      else if (shape === 'raw')
        text = `token=${creds[0]?.[1] ?? 'x'}\u0000&sessionId[=${creds[0]?.[1] ?? 'y'}`.replace(
          /EVILx\w+/g,
          'notacredential',
        );
      else {
        const obj: Record<string, unknown> = {};
        // JSON names are read as they are (no decoding, trimming or brackets): plant the bare name, any case.
        for (const [k, v] of creds)
          obj[
            decodeURIComponent(k.replace(/\+/g, ' '))
              .trim()
              .replace(/\[.*\]$/, '')
          ] = v;
        for (const [k, v] of fields) obj[k] = v;
        if (planted) {
          let at = obj;
          const [path, value] = planted;
          for (const name of path.slice(0, -1)) {
            const inner: Record<string, unknown> = {};
            at[name] = Math.random() < 0.3 ? [inner] : inner;
            at = inner;
          }
          at[path[path.length - 1]] = value;
        }
        text = JSON.stringify(obj);
        if (shape === 'json-proto')
          text = text.replace(
            /^\{/,
            '{"__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}},',
          );
      }
      return { body: Buffer.from(text), contentType };
    });

  const proxyWrite = fc
    .tuple(
      iface
        .filter((n) => n === 'macro' || n === 'company')
        .chain((name) =>
          fc.tuple(fc.constant(name), fc.constantFrom(...ROUTES[name].filter((r) => r.method !== 'GET'))),
        ),
      fc.array(segment, { minLength: 1, maxLength: 2 }),
      query,
      authPlacement,
      writeBody,
    )
    .map(([[name, route], seg, q, a, b]) =>
      build(
        `${route.method} ${route.id}`,
        route.method,
        withQuery(fillPath(route, PREFIXES[name][0], seg), [...q, ...a.query]),
        a.headers,
        b.body,
        b.contentType,
      ),
    );

  /** Batch item paths: proxy paths, and every way out of the interface an item names. */
  const itemPath = fc.oneof(
    { weight: 3, arbitrary: proxyGet.map((r) => r.head.split(' ')[1]) },
    {
      weight: 4,
      arbitrary: fc
        .tuple(
          fc.constantFrom('macro', 'company', 'documents', 'news', 'deals', 'dw'),
          fc.array(fc.constantFrom(...TRAVERSALS, '..\\', '%2e%2e\\'), { minLength: 1, maxLength: 3 }),
          fc.constantFrom(
            ...NON_PROXY,
            'company/companies/1',
            'documents/Dictionary/getTopics/',
            'macro/feeds',
            'v2/feeds',
          ),
        )
        .map(([p, trav, target]) => `/${p}/${trav.join('/')}/${target}`),
    },
    {
      weight: 2,
      arbitrary: fc.constantFrom(
        '/documents/Auth/getUserData/',
        `/news/Auth/login/?username=fuzz-app&password=${ctx.key}`,
        '/dw/Auth/logout/',
        '/macro/login',
        '/health/ready',
        '/metrics',
        '/admin/cache',
        '/docs/json',
        '/batch',
        '/console/api/state',
        `//${ctx.trap}/macro/feeds`,
        `http://${ctx.trap}/macro/feeds`,
        `/\\${ctx.trap}/macro/feeds`,
        `/macro/series/@${ctx.trap}`,
        `/macro@${ctx.trap}/feeds`,
        '/macro/feeds#../../metrics',
        '/macro/feeds?x=1#/../../admin/cache',
        '/MACRO/../health/ready',
        '/macro//..//health/ready',
        '/macro/%2e%2e%2fhealth%2fready',
        '/macro/.%2e/docs/json',
      ),
    },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom('/macro/series/1', '/deals/SearchDeal/getDeals/', '/news/Search/query/'),
          credentialName,
          evilValue,
        )
        .map(([p, k, v]) => `${p}?${k}=${v}`),
    },
    { weight: 1, arbitrary: fc.constantFrom(...CONTROL, ...INVALID_UTF8).map((s) => `/macro/series/${s}`) },
  );
  const itemHeaders = fc.option(
    fc.oneof(
      fc.constant({ accept: 'application/xml' }),
      fc.constant({ 'Cache-Control': 'no-cache' }),
      fc.constant({ 'accept-language': 'zh' }),
      evilValue.map((e) => ({ 'x-api-key': e })),
      evilValue.map((e) => ({ authorization: `Bearer ${e}` })),
      fc.constant({ accept: 'x\r\nX-Injected: yes' }),
    ),
    { nil: undefined },
  );
  const batchItem = fc.record(
    {
      path: itemPath,
      headers: itemHeaders,
      id: fc.option(fc.oneof(fc.string({ maxLength: 8 }), fc.integer()), { nil: undefined }),
      method: fc.option(fc.constantFrom('GET', 'get', 'POST', 'DELETE'), { freq: 8, nil: undefined }),
    },
    { requiredKeys: ['path'] },
  );
  const batch = fc
    .tuple(
      fc.array(batchItem, { minLength: 1, maxLength: 5 }),
      fc.constantFrom(
        'ok',
        'ok',
        'ok',
        'proto',
        'extra',
        'notjson',
        'toomany',
        'items-not-objects',
        'timeout',
      ),
      authPlacement,
      fc.constantFrom(
        'application/json',
        'application/json',
        'text/plain',
        undefined,
        'application/x-www-form-urlencoded',
      ),
    )
    .map(([items, shape, a, type]) => {
      const clean = items.map((i) =>
        Object.fromEntries(Object.entries(i).filter(([, v]) => v !== undefined)),
      );
      let doc: unknown = { requests: clean };
      if (shape === 'extra') doc = { requests: clean, extra: 1 };
      if (shape === 'toomany') doc = { requests: Array.from({ length: 25 }, () => clean[0]) };
      if (shape === 'items-not-objects') doc = { requests: ['/macro/feeds', 1, null] };
      if (shape === 'timeout') doc = { requests: clean, timeoutMs: 1 };
      let text = JSON.stringify(doc);
      if (shape === 'proto') text = text.replace(/^\{/, '{"__proto__":{"polluted":"yes","requests":[]},');
      if (shape === 'notjson') text = text.slice(0, -3);
      const r = build(
        `POST /batch (${shape})`,
        'POST',
        withQuery('/batch', a.query),
        a.headers,
        Buffer.from(text),
        type,
      );
      return { ...r, batchItems: clean.map((i) => i.path as string) };
    });

  const admin = fc
    .tuple(
      fc.constantFrom(
        'GET /admin/cache',
        'POST /admin/cache/purge',
        'DELETE /admin/cache',
        'GET /admin/cache/purge',
      ),
      fc.constantFrom(
        `Authorization: Bearer ${ctx.adminToken}`,
        `X-Admin-Token: ${ctx.adminToken}`,
        `Authorization: Bearer ${ctx.key}`,
        `X-Admin-Token: ${ctx.adminToken}x`,
        'X-Admin-Token: ',
        `Authorization: bearer ${ctx.adminToken.toUpperCase()}`,
        '',
      ),
      fc.constantFrom(
        '',
        '{"upstream":"macro"}',
        '{"path":"/macro/feeds"}',
        '{"path":"/macro/../../"}',
        '{"upstream":"macro","pathPrefix":"/%2e%2e/"}',
        '{"upstream":"__proto__"}',
        '{"__proto__":{"polluted":"yes"},"upstream":"macro"}',
        '{"upstream":["macro"]}',
        '{"path":"//127.0.0.1/x"}',
        'not json',
        '[]',
      ),
      query,
    )
    .map(([line, auth, body, q]) => {
      const [method, path] = line.split(' ');
      return build(
        `admin ${line}`,
        method,
        withQuery(path, q),
        auth ? [auth] : [],
        Buffer.from(body),
        body ? 'application/json' : undefined,
      );
    });

  /** The gateway's own endpoints and the EMIS/CEIC login answers, with odd credentials. */
  const ownEndpoints = fc
    .tuple(
      fc.constantFrom(
        'GET /health/live',
        'GET /health/ready',
        'GET /metrics',
        'GET /docs/json',
        'GET /docs',
        'GET /console',
        'GET /console/api/state',
        'POST /macro/login',
        'GET /documents/Auth/login/',
        'POST /news/Auth/login/',
        'GET /dw/Auth/getUserData/',
        'GET /deals/Auth/logout/',
        'OPTIONS /macro/feeds',
        'HEAD /macro/feeds',
        'GET /',
        'GET /nonexistent',
        'PUT /macro/feeds',
        'TRACE /macro/feeds',
      ),
      fc.constantFrom(
        `Authorization: Bearer ${ctx.metricsToken}`,
        `Authorization: Bearer ${ctx.operatorToken}`,
        `X-Operator-Token: ${ctx.operatorToken}`,
        `Authorization: Bearer ${ctx.key}`,
        'Origin: http://evil.invalid',
        'Access-Control-Request-Method: DELETE',
        '',
      ),
      fc.oneof(
        query,
        fc.constant([`username=fuzz-app`, `password=${ctx.key}`]),
        evilValue.map((e) => [`username=fuzz-app`, `password=${e}`]),
      ),
    )
    .map(([line, h, q]) => {
      const [method, path] = line.split(' ');
      // `password` is a credential only where a login reads it: elsewhere the login pair becomes `token`,
      // the position every route strips (planted values must sit where a vendor would read a credential).
      const login = /login/i.test(path);
      const pairs = login ? q : q.map((p) => p.replace(/^password=/, 'token='));
      return build(`own ${line}`, method, withQuery(path, pairs), h ? [h] : []);
    });

  /** Paths that try to leave the interface (or the gateway) at the top level. */
  const traversalPath = fc
    .tuple(
      fc.constantFrom('macro', 'company', 'news', 'dw', 'documents', 'deals'),
      fc.array(fc.constantFrom(...TRAVERSALS, ...hostTricks), { minLength: 1, maxLength: 3 }),
      fc.constantFrom(...NON_PROXY, 'feeds', 'v2/feeds', 'etc/passwd'),
      authPlacement,
    )
    .map(([p, trav, target, a]) =>
      build('traversal', 'GET', withQuery(`/${p}/${trav.join('/')}/${target}`, a.query), a.headers),
    );

  /** Framing-level hostility: each is sent alone; a correct gateway answers each in the envelope. */
  const dirty = fc
    .tuple(
      fc.constantFrom(
        'cl+te',
        'cl-dup',
        'cl-nan',
        'cl-negative',
        'bad-chunk',
        'bare-lf',
        'obs-fold',
        'space-in-name',
        'nul-in-header',
        'cr-in-value',
        'garbage-line',
        'no-version',
        'http-9',
        'space-in-target',
        'raw-utf8',
        'raw-nul',
        'no-host',
        'two-hosts',
        'long-url',
        'long-header',
        'over-limit',
        'absolute-form',
        'connect',
        'asterisk',
        'lower-method',
        'unknown-method',
        'http-1.0',
        'smuggled-second',
        'percent-garbage',
      ),
      authPlacement,
    )
    .map(([what, a]): FuzzRequest => {
      const auth = a.headers.join('\r\n') + (a.headers.length ? '\r\n' : '');
      const q = a.query.length ? `?${a.query.join('&')}` : '';
      const rid = 'X-Request-Id: {RID}\r\n';
      const dirtyReq = (head: string, body = '', method = 'GET', expect = 1): FuzzRequest => ({
        kind: `dirty ${what}`,
        method,
        head,
        body: Buffer.from(body, 'latin1'),
        dirty: true,
        expect,
      });
      const get = (target: string, extra = '') =>
        `GET ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}${rid}${extra}\r\n`;
      const post = (extra: string, body: string) =>
        dirtyReq(
          `POST /macro/feeds${q} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}${rid}Content-Type: application/x-www-form-urlencoded\r\n${extra}\r\n`,
          body,
          'POST',
        );
      switch (what) {
        case 'cl+te':
          return post('Content-Length: 4\r\nTransfer-Encoding: chunked\r\n', '0\r\n\r\n');
        case 'cl-dup':
          return post('Content-Length: 3\r\nContent-Length: 5\r\n', 'a=123');
        case 'cl-nan':
          return post('Content-Length: abc\r\n', 'a=1');
        case 'cl-negative':
          return post('Content-Length: -1\r\n', 'a=1');
        case 'bad-chunk':
          return post('Transfer-Encoding: chunked\r\n', 'zz\r\nabc\r\n0\r\n\r\n');
        case 'bare-lf':
          return dirtyReq(
            `GET /macro/feeds${q} HTTP/1.1\nHost: 127.0.0.1\n${auth.replace(/\r\n/g, '\n')}X-Request-Id: {RID}\n\n`,
          );
        case 'obs-fold':
          return dirtyReq(get(`/macro/feeds${q}`, 'X-Folded: a\r\n b\r\n'));
        case 'space-in-name':
          return dirtyReq(get(`/macro/feeds${q}`, 'token : EVILxspace\r\n'));
        case 'nul-in-header':
          return dirtyReq(get(`/macro/feeds${q}`, 'X-Nul: a\u0000b\r\n'));
        case 'cr-in-value':
          return dirtyReq(get(`/macro/feeds${q}`, 'X-Cr: a\rInjected: b\r\n'));
        case 'garbage-line':
          return dirtyReq(`\u0000\u0001\u00ff GARBAGE\r\nHost: 127.0.0.1\r\n${rid}\r\n`);
        case 'no-version':
          return dirtyReq(`GET /macro/feeds${q}\r\nHost: 127.0.0.1\r\n${auth}${rid}\r\n`);
        case 'http-9':
          return dirtyReq(`GET /macro/feeds${q} HTTP/9.9\r\nHost: 127.0.0.1\r\n${auth}${rid}\r\n`);
        case 'space-in-target':
          return dirtyReq(get(`/macro/series/a b${q}`));
        case 'raw-utf8':
          return dirtyReq(get(`/macro/series/\u00ff\u00fe\u00c3(${q}`));
        case 'raw-nul':
          return dirtyReq(get(`/macro/series/a\u0000b${q}`));
        case 'no-host':
          return dirtyReq(`GET /macro/feeds${q} HTTP/1.1\r\n${auth}${rid}\r\n`);
        case 'two-hosts':
          return dirtyReq(get(`/macro/feeds${q}`, `Host: ${ctx.trap}\r\n`));
        case 'long-url':
          return dirtyReq(get(`/macro/series/1?x=${'a'.repeat(70_000)}${q ? '&' + q.slice(1) : ''}`));
        case 'long-header':
          return dirtyReq(get(`/macro/feeds${q}`, `X-Long: ${'b'.repeat(70_000)}\r\n`));
        case 'over-limit':
          return post(`Content-Length: ${ctx.bodyLimit + 4096}\r\n`, 'a='.padEnd(ctx.bodyLimit + 4096, 'x'));
        case 'absolute-form':
          return dirtyReq(
            `GET http://${ctx.trap}/macro/feeds${q} HTTP/1.1\r\nHost: ${ctx.trap}\r\n${auth}${rid}\r\n`,
          );
        case 'connect':
          return dirtyReq(
            `CONNECT ${ctx.trap} HTTP/1.1\r\nHost: ${ctx.trap}\r\n${auth}${rid}\r\n`,
            '',
            'CONNECT',
          );
        case 'asterisk':
          return dirtyReq(`OPTIONS * HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}${rid}\r\n`, '', 'OPTIONS');
        case 'lower-method':
          return dirtyReq(`get /macro/feeds${q} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}${rid}\r\n`);
        case 'unknown-method':
          return dirtyReq(
            `FROB /macro/feeds${q} HTTP/1.1\r\nHost: 127.0.0.1\r\n${auth}${rid}\r\n`,
            '',
            'FROB',
          );
        case 'http-1.0':
          return dirtyReq(`GET /macro/feeds${q} HTTP/1.0\r\n${auth}${rid}\r\n`);
        case 'smuggled-second':
          // A declared length shorter than the bytes: the rest is a second, complete request.
          return {
            ...post('Content-Length: 3\r\n', `a=1GET /health/live HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`),
            expect: 2,
          };
        case 'percent-garbage':
          return dirtyReq(get(`/macro/series/%ff%fe${q}`));
      }
      return dirtyReq(get('/'));
    });

  const jwt = ctx.tokens ? jwtRequests(ctx, ctx.tokens, routeOf, fillPath) : undefined;

  return fc.oneof(
    ...(jwt ? [{ weight: 6, arbitrary: jwt }] : []),
    { weight: 30, arbitrary: proxyGet },
    { weight: 10, arbitrary: proxyWrite },
    { weight: 8, arbitrary: batch },
    { weight: 5, arbitrary: admin },
    { weight: 6, arbitrary: ownEndpoints },
    { weight: 8, arbitrary: traversalPath },
    { weight: 8, arbitrary: dirty },
  );
}

const B64URL = [...'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_'];
const b64 = (v: unknown): string =>
  Buffer.from(typeof v === 'string' ? v : JSON.stringify(v)).toString('base64url');

/**
 * Bearer values shaped like JWTs, at every position a key is read from: the tokens made with real keys
 * (accepted and refused), and unsigned shapes — malformed parts, hostile headers (`alg` none or HMAC or an
 * array, `kid` traversal or huge, `jku`/`x5u` to the trap, `crit`, `b64: false`), odd claims (numbers for
 * strings, an object audience, a JSON array payload), and headers of 8–36 KiB.
 */
function jwtRequests(
  ctx: FuzzContext,
  tokens: FuzzTokens,
  routeOf: (want: (r: RouteDefinition) => boolean) => fc.Arbitrary<[Iface, RouteDefinition, string]>,
  fillPath: (route: RouteDefinition, prefix: string, seg: string[]) => string,
): fc.Arbitrary<FuzzRequest> {
  const claims = { iss: tokens.issuer, aud: tokens.audience, sub: 'fuzz', exp: 4_102_444_800 };
  const part = fc.string({ unit: fc.constantFrom(...B64URL), maxLength: 48 });
  const header = fc.constantFrom<Record<string, unknown> | string>(
    { alg: 'none', typ: 'JWT' },
    { alg: 'NONE' },
    { alg: 'HS256', kid: tokens.kid },
    { alg: 'RS256', kid: tokens.kid },
    { alg: 'RS256', kid: '../../../../etc/passwd' },
    { alg: 'RS256', kid: 'k'.repeat(4_000) },
    { alg: 'RS256', kid: { $ne: null } },
    { alg: ['RS256'] },
    { alg: 'RS256', jku: `http://${ctx.trap}/jwks` },
    { alg: 'RS256', x5u: `http://${ctx.trap}/cert` },
    { alg: 'RS256', crit: ['exp'], exp: 1 },
    { alg: 'RS256', b64: false, crit: ['b64'] },
    { alg: 'RS256', zip: 'DEF' },
    '{"alg":"RS256","__proto__":{"polluted":"yes"},"constructor":{"prototype":{"polluted":"yes"}}}',
    {},
  );
  const payload = fc.constantFrom<unknown>(
    claims,
    { ...claims, iss: 123 },
    { ...claims, iss: `${tokens.issuer}/` },
    { ...claims, aud: { [tokens.audience]: true } },
    { ...claims, aud: [] },
    { ...claims, exp: 'never' },
    { ...claims, nbf: 'now' },
    [claims],
    'not json',
    'null',
  );
  const unsigned = fc
    .tuple(header, payload, fc.oneof(fc.constant(''), part, fc.constant('==')))
    .map(([h, p, sig]) => ({
      name: `unsigned ${typeof h === 'string' ? 'proto' : JSON.stringify(h.alg ?? 'no-alg')}`,
      value: `${b64(h)}.${b64(typeof p === 'string' ? p : JSON.stringify(p))}.${sig}`,
    }));
  const malformed = fc
    .array(part, { minLength: 2, maxLength: 5 })
    .map((parts) => ({ name: 'malformed', value: parts.join('.') }));
  const huge = fc.integer({ min: 8_000, max: 36_000 }).map((n) => ({
    name: 'huge header',
    value: `${b64({ alg: 'RS256', kid: tokens.kid, pad: 'p'.repeat(n) })}.${b64(claims)}.${'s'.repeat(86)}`,
  }));
  const value = fc.oneof(
    { weight: 2, arbitrary: fc.constantFrom(...tokens.valid).map((v) => ({ name: 'valid', value: v })) },
    {
      weight: 4,
      arbitrary: fc.constantFrom(...Object.entries(tokens.refused)).map(([name, v]) => ({ name, value: v })),
    },
    { weight: 3, arbitrary: unsigned },
    { weight: 2, arbitrary: malformed },
    { weight: 1, arbitrary: huge },
  );
  const placement = fc.constantFrom('bearer', 'raw', 'x-api-key', 'query', 'bearer+origin');
  return fc
    .tuple(
      routeOf((r) => r.method === 'GET'),
      value,
      placement,
    )
    .map(([[, route, prefix], v, where]) => {
      let target = fillPath(route, prefix, ['TB1207']);
      const headers: string[] = [];
      if (where === 'query') target += `?token=${v.value}`;
      else if (where === 'x-api-key') headers.push(`X-API-Key: ${v.value}`);
      else if (where === 'raw') headers.push(`Authorization: ${v.value}`);
      else headers.push(`Authorization: Bearer ${v.value}`);
      if (where === 'bearer+origin') headers.push('Origin: http://evil.invalid');
      const lines = [`GET ${target} HTTP/1.1`, 'Host: 127.0.0.1', ...headers, 'X-Request-Id: {RID}'];
      return {
        kind: `jwt ${v.name}`,
        method: 'GET',
        head: lines.join('\r\n') + '\r\n\r\n',
        body: Buffer.alloc(0),
        dirty: false,
        expect: 1,
      };
    });
}
