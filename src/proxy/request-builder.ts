import type { Consumer } from '../core/auth/consumer.js';
import { GatewayError } from '../core/errors/gateway-error.js';
import {
  formatFromQuery,
  negotiateFormat,
  negotiateLanguage,
  type WireFormat,
} from '../core/http/negotiation.js';
import { baseName, type QueryPairs } from '../core/http/query-string.js';
import type { RequestTrace } from '../core/tracing/trace-context.js';
import { checkWriteBody } from '../core/http/write-body.js';
import type { GatewaySecretShapes } from '../core/auth/gateway-key-shape.js';
import { refuseGatewaySecrets } from './gateway-key-refusal.js';
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

/** A query parameter as Fastify's parser reads it: one value, several (repeated or indexed), or none. */
function paramOf(query: QueryPairs, name: string): string | string[] | undefined {
  let out: string | string[] | undefined;
  for (const [k, v] of query) {
    if (baseName(k) !== name) continue;
    if (out === undefined) out = k === name ? v : [v];
    else out = [...(Array.isArray(out) ? out : [out]), v];
  }
  return out;
}

/** Compiled once per route: the upstream path template split into literals and parameters. */
export interface CompiledRoute {
  readonly route: RouteDefinition;
  readonly def: UpstreamDefinition;
  readonly parts: readonly PathPart[];
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
  return { route, def, parts };
}

/** `/feeds/{id}` → `feeds/:id` for Nest's router. */
export function nestPathOf(templatePath: string): string {
  return templatePath.replace(/^\//, '').replace(/\{([A-Za-z_][A-Za-z0-9_]*)\}/g, ':$1');
}

// eslint-disable-next-line no-control-regex
const BAD_PARAM = /[/\\\u0000-\u001f\u007f]/;

/** A path parameter must be a single, non-empty, non-dot segment: no path tricks reach the upstream. */
export function checkPathParam(name: string, value: unknown): string {
  if (typeof value !== 'string' || value.trim() === '')
    throw new GatewayError('VALIDATION_FAILED', {
      parameter: name,
      message: `Path parameter "${name}" must not be empty.`,
    });
  if (value === '.' || value === '..' || BAD_PARAM.test(value) || value.length > 8192)
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

  let format: WireFormat = 'json';
  const givenFormat = paramOf(query, 'format');
  const formatParam = typeof givenFormat === 'string' ? givenFormat : undefined;
  if (formatParam !== undefined && formatParam !== '') {
    const f = formatFromQuery(formatParam);
    if (!f)
      throw new GatewayError('UNSUPPORTED_FORMAT', {
        parameter: 'format',
        message: 'format must be json or xml.',
      });
    format = f;
  } else if (!route.file) {
    const f = negotiateFormat(header('accept'));
    if (!f)
      throw new GatewayError('UNSUPPORTED_FORMAT', {
        parameter: 'Accept',
        message: 'The Accept header admits neither application/json nor application/xml.',
      });
    format = f;
  }

  // Never a JSON answer to a request that accepts only XML: an upstream without XML refuses it here.
  if (format === 'xml' && def.formats && !def.formats.includes('xml'))
    throw new GatewayError('UNSUPPORTED_FORMAT', {
      parameter: formatParam ? 'format' : 'Accept',
      message: `${def.title} answers in JSON only.`,
    });

  let lang: string | undefined;
  let langGiven: string | undefined;
  if (def.languages) {
    const fallback = def.defaultLanguage ?? def.languages[0];
    const langParam = paramOf(query, 'lang');
    if (Array.isArray(langParam))
      throw new GatewayError('VALIDATION_FAILED', { parameter: 'lang', message: 'lang must be given once.' });
    // Same rule as `format`: any case, and empty is the same as absent.
    const wanted = typeof langParam === 'string' ? langParam.trim().toLowerCase() : undefined;
    if (wanted) {
      if (!def.languages.includes(wanted))
        throw new GatewayError('VALIDATION_FAILED', {
          parameter: 'lang',
          message: `lang must be one of ${def.languages.join(', ')}.`,
        });
      lang = langGiven = wanted;
    } else lang = negotiateLanguage(header('accept-language'), def.languages, fallback);
  }

  const headers: Record<string, string> = {
    accept: route.file
      ? (header('accept') ?? '*/*')
      : format === 'xml'
        ? 'application/xml'
        : 'application/json',
    'user-agent': 'Atrium-Gateway',
    'x-request-id': call.requestId,
  };
  if (lang) headers['accept-language'] = lang;
  else if (!def.languages) {
    // An upstream without language handling gets the client's preference as sent (it may localise).
    const acceptLanguage = header('accept-language');
    if (acceptLanguage) headers['accept-language'] = acceptLanguage;
  }
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
    query:
      langGiven === undefined
        ? query.slice()
        : query.map(([k, v]): [string, string] => (k === 'lang' ? [k, langGiven] : [k, v])),
    headers,
    body,
    consumerId: consumer.id,
    requestId: call.requestId,
    format,
    lang,
    credentialId: def.credentials.id,
    deadline: Date.now() + def.timeoutMs,
    noCache: NO_CACHE.test(header('cache-control') ?? ''),
    weight: consumer.weight,
    trace: call.trace,
  };
  def.shapeRequest?.(out);
  return out;
}
