import type { AtriumConfig, UpstreamConfig } from '../../config/atrium-config.js';
import type { SecretRedactor } from '../../core/logging/secret-redactor.js';
import type { ProxyRequest, RouteDefinition, UpstreamCredentials } from '../../proxy/pipeline.types.js';
import type { UpstreamDefinition } from '../../proxy/upstream-definition.js';
import { emisErrorMapper } from './emis-error.mapper.js';
import { EmisSessionCredentials } from './emis-session.credentials.js';
import { QueryTokenCredentials } from './static-token.credentials.js';

/**
 * The credentials of an EMIS function API (documents, deals): the login step when a username and password
 * are configured (they take precedence), else the portal key as the `token` query parameter.
 */
export function emisCredentials(
  u: UpstreamConfig,
  title: string,
  redactor: SecretRedactor,
): UpstreamCredentials {
  if (u.username && u.password)
    return new EmisSessionCredentials({
      upstream: u.name,
      title,
      baseUrl: u.baseUrl,
      username: u.username,
      password: u.password,
      sessionTtlMs: u.sessionTtlMs,
      refreshMarginMs: u.sessionRefreshMarginMs,
      backoffMs: u.loginBackoffMs,
      backoffMaxMs: u.loginBackoffMaxMs,
      connectTimeoutMs: u.connectTimeoutMs,
      timeoutMs: u.timeoutMs,
      redactor,
    });
  if (!u.token) throw new Error(`${u.name}: a token or a username and password are required`);
  return new QueryTokenCredentials('token', u.token);
}

/**
 * EMIS serves XML under `<api>/xml/…` rather than through a parameter (upstreams.md §4), so an XML request
 * goes to the `/xml` twin of its path. The gateway's own `format=json|xml` is not an EMIS parameter and
 * stays behind. Files are what they are: their path is never rewritten.
 */
export function shapeEmisRequest(req: ProxyRequest): void {
  if (req.route.file) return;
  if (req.format === 'xml') req.path = '/xml' + req.path;
  if (req.query.some(isGatewayFormat)) req.query = req.query.filter((p) => !isGatewayFormat(p));
}

const GATEWAY_FORMAT = /^\s*(json|xml)\s*$/i;

function isGatewayFormat([k, v]: [string, string]): boolean {
  return k === 'format' && GATEWAY_FORMAT.test(v);
}

export interface EmisDefinitionOptions {
  readonly name: 'documents' | 'deals';
  readonly title: string;
  readonly prefixes: readonly string[];
  readonly routes: readonly RouteDefinition[];
  readonly config: AtriumConfig;
  readonly redactor: SecretRedactor;
}

/** The definition of an EMIS function API, from its config. */
export function emisDefinition(o: EmisDefinitionOptions): UpstreamDefinition {
  const u = o.config.upstreams[o.name];
  return {
    name: o.name,
    title: o.title,
    prefixes: o.prefixes,
    routes: o.routes,
    errorMapper: emisErrorMapper,
    credentials: emisCredentials(u, o.title, o.redactor),
    timeoutMs: u.timeoutMs,
    shapeRequest: shapeEmisRequest,
    transport: {
      baseUrl: u.baseUrl,
      connections: u.connections,
      keepAliveTimeoutMs: 30_000,
      connectTimeoutMs: u.connectTimeoutMs,
      headersTimeoutMs: u.timeoutMs,
      bodyTimeoutMs: u.timeoutMs,
      maxResponseBytes: o.config.maxResponseBytes,
    },
  };
}
