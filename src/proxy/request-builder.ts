import type { Consumer } from '../core/auth/consumer.js';
import { GatewayError } from '../core/errors/gateway-error.js';
import { type QueryPairs } from '../core/http/query-string.js';
import type { RequestTrace } from '../core/tracing/trace-context.js';
import { checkWriteBody } from '../core/http/write-body.js';
import type { GatewaySecretShapes } from '../core/auth/gateway-key-shape.js';
import { refuseGatewaySecrets } from './gateway-key-refusal.js';
import { canonicalRequest, type CanonicalSpec } from './canonical-request.js';
import type { ProxyRequest, RouteDefinition } from './pipeline.types.js';
import type { UpstreamDefinition } from './upstream-definition.js';

type PathPart = string | { param: string };

/**
 * One consumer request for a route, as the proxy takes it: from the route's controller, a batch item or a
 * view part alike. The access policy has admitted it (authentication, quota, permission, validation).
 */
export interface ProxyCall {
  readonly route: RouteDefinition;
  readonly consumer: Consumer;
  /** Path parameters of the route's template, decoded. */
  readonly params: Readonly<Record<string, unknown>>;
  /** Query pairs in the consumer's order. */
  readonly query: QueryPairs;
  /** The request headers the proxy reads (lower-case names, repeated values joined). */
  readonly headers: Readonly<RequestHeaders>;
  /** Every header the consumer sent, when it came over HTTP: checked for gateway keys, never forwarded. */
  readonly allHeaders?: Readonly<Record<string, string | string[] | undefined>>;
  readonly body?: Buffer;
  readonly requestId: string;
  readonly trace?: RequestTrace;
}

export interface RequestHeaders {
  accept?: string;
  'accept-language'?: string;
  'cache-control'?: string;
  'content-type'?: string;
}

/** The request headers a ProxyCall carries, from any request's headers. */
export function requestHeadersOf(
  headers: Readonly<Record<string, string | string[] | undefined>>,
): RequestHeaders {
  const out: RequestHeaders = {};
  for (const name of ['accept', 'accept-language', 'cache-control', 'content-type'] as const) {
    const v = headers[name];
    if (v !== undefined) out[name] = Array.isArray(v) ? v.join(', ') : v;
  }
  return out;
}

/** Compiled once per route: the upstream path template split into literals and parameters. */
export interface CompiledRoute {
  readonly route: RouteDefinition;
  readonly def: UpstreamDefinition;
  readonly parts: readonly PathPart[];
  /** What the route's canonical request follows from (canonical-request.ts). */
  readonly canonical: CanonicalSpec;
}

export function compileRoute(def: UpstreamDefinition, route: RouteDefinition): CompiledRoute {
  const parts: PathPart[] = [];
  const re = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;
  let last = 0;
  for (let m = re.exec(route.path); m; m = re.exec(route.path)) {
    if (m.index > last) parts.push(route.path.slice(last, m.index));
    parts.push({ param: m[1] });
    last = m.index + m[0].length;
  }
  if (last < route.path.length) parts.push(route.path.slice(last));
  const canonical: CanonicalSpec = {
    title: def.title,
    params: def.commonParams || route.params ? { ...def.commonParams, ...route.params } : undefined,
    languages: def.languages,
    defaultLanguage: def.defaultLanguage,
    formats: def.formats,
    file: route.file,
  };
  return { route, def, parts, canonical };
}

/** `/feeds/{id}` → `feeds/:id` for Nest's router. */
export function nestPathOf(templatePath: string): string {
  return templatePath.replace(/^\//, '').replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
}

/** Longest path parameter forwarded (decoded characters); the router refuses a segment over 16 KiB with 414. */
export const MAX_PATH_PARAM = 8192;

// eslint-disable-next-line no-control-regex
const BAD_PARAM = /[/\\\u0000-\u001f\u007f]/;

/** A path parameter must be a single, non-empty, non-dot segment: no path tricks reach the upstream. */
export function checkPathParam(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new GatewayError('VALIDATION_FAILED', {
      parameter: name,
      message: `Path parameter "${name}" must not be empty.`,
    });
  if (value.length > MAX_PATH_PARAM)
    throw new GatewayError('VALIDATION_FAILED', {
      parameter: name,
      message: `Path parameter "${name}" is ${value.length} characters long; at most ${MAX_PATH_PARAM} are accepted.`,
    });
  if (value === '.' || value === '..' || BAD_PARAM.test(value))
    throw new GatewayError('VALIDATION_FAILED', {
      parameter: name,
      message: `Path parameter "${name}" must be a single path segment.`,
    });
  return value;
}

const NO_CACHE = /(^|,)\s*no-cache\s*(,|$)/i;

/** Builds the pipeline request from a consumer's call: the only place that reads consumer input. */
export function buildProxyRequest(
  compiled: CompiledRoute,
  call: ProxyCall,
  shapes?: GatewaySecretShapes,
): ProxyRequest {
  const { route, def } = compiled;
  const { params, consumer, query } = call;
  const header = (name: keyof RequestHeaders): string | undefined => call.headers[name];
  let path = '';
  for (const p of compiled.parts)
    path += typeof p === 'string' ? p : encodeURIComponent(checkPathParam(p.param, params[p.param]));
  if (shapes)
    refuseGatewaySecrets(
      {
        params,
        query,
        headers: call.allHeaders ?? call.headers,
        body: route.method !== 'GET' ? call.body : undefined,
      },
      shapes,
    );

  const canonical = canonicalRequest(compiled.canonical, query, {
    accept: header('accept'),
    acceptLanguage: header('accept-language'),
  });
  const headers: Record<string, string> = {
    accept: canonical.accept,
    'user-agent': 'Atrium-Gateway',
    'x-request-id': call.requestId,
  };
  if (canonical.acceptLanguage) headers['accept-language'] = canonical.acceptLanguage;
  let body: Buffer | undefined;
  if (route.method !== 'GET' && call.body !== undefined && call.body.length > 0) {
    body = call.body;
    // Only bodies the credentials stage can read (form or JSON), sent with the type they were read as.
    headers['content-type'] = checkWriteBody(header('content-type'), body);
  }

  const out: ProxyRequest = {
    upstream: def.name,
    route,
    method: route.method,
    path,
    query: canonical.query,
    headers,
    body,
    consumerId: consumer.id,
    requestId: call.requestId,
    format: canonical.format,
    lang: canonical.lang,
    credentialId: def.credentials.id,
    deadline: Date.now() + def.timeoutMs,
    noCache: NO_CACHE.test(header('cache-control') ?? ''),
    weight: consumer.weight,
    trace: call.trace,
  };
  def.shapeRequest?.(out);
  return out;
}
