import type { FastifyRequest } from 'fastify';
import type { Consumer } from '../core/auth/consumer.js';
import { GatewayError } from '../core/errors/gateway-error.js';
import { queryPairsOf } from '../core/http/query-string.js';
import { checkWriteBody } from '../core/http/write-body.js';
import { canonicalRequest, type CanonicalSpec } from './canonical-request.js';
import type { ProxyRequest, RouteDefinition } from './pipeline.types.js';
import type { UpstreamDefinition } from './upstream-definition.js';

type PathPart = string | { param: string };

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
    params: route.params,
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

/** A request header as one string (repeated headers joined). */
export function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(', ') : v;
}

const NO_CACHE = /(^|,)\s*no-cache\s*(,|$)/i;

/** `Cache-Control: no-cache` from the consumer. */
export function wantsNoCache(req: FastifyRequest): boolean {
  return NO_CACHE.test(header(req, 'cache-control') ?? '');
}

/** Builds the pipeline request from the Fastify request: the only place that reads consumer input. */
export function buildProxyRequest(
  compiled: CompiledRoute,
  req: FastifyRequest,
  consumer: Consumer,
  keyRemembered = false,
): ProxyRequest {
  const { route, def } = compiled;
  const params = (req.params ?? {}) as Record<string, unknown>;
  let path = '';
  for (const p of compiled.parts)
    path += typeof p === 'string' ? p : encodeURIComponent(checkPathParam(p.param, params[p.param]));

  const canonical = canonicalRequest(compiled.canonical, queryPairsOf(req), {
    accept: header(req, 'accept'),
    acceptLanguage: header(req, 'accept-language'),
  });
  const headers: Record<string, string> = {
    accept: canonical.accept,
    'user-agent': 'Atrium-Gateway',
    'x-request-id': String(req.id),
  };
  if (canonical.acceptLanguage) headers['accept-language'] = canonical.acceptLanguage;
  let body: Buffer | undefined;
  if (route.method !== 'GET' && Buffer.isBuffer(req.body) && req.body.length > 0) {
    body = req.body;
    // Only bodies the credentials stage can read (form or JSON), sent with the type they were read as.
    headers['content-type'] = checkWriteBody(header(req, 'content-type'), body);
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
    requestId: String(req.id),
    format: canonical.format,
    lang: canonical.lang,
    credentialId: def.credentials.id,
    deadline: Date.now() + def.timeoutMs,
    noCache: wantsNoCache(req),
    weight: consumer.weight,
    trace: req.trace,
    keyRemembered,
  };
  def.shapeRequest?.(out);
  return out;
}
