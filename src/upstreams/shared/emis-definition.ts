import type { UpstreamConfig } from '../../config/atrium-config.js';
import type { SecretRedactor } from '../../core/logging/secret-redactor.js';
import type { ProxyRequest, RouteDefinition, UpstreamCredentials } from '../../proxy/pipeline.types.js';
import {
  defineUpstream,
  type SandboxFake,
  type UpstreamDeclaration,
  type UpstreamSandbox,
} from '../upstream-declaration.js';
import { createEmisAuthController } from './emis-auth.controller.js';
import { emisErrorMapper } from './emis-error.mapper.js';
import { emisErrorShape } from './emis-error.shape.js';
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
      ...(u.passwordSecret && { passwordSecret: u.passwordSecret }),
      sessionTtlMs: u.sessionTtlMs,
      refreshMarginMs: u.sessionRefreshMarginMs,
      backoffMs: u.loginBackoffMs,
      backoffMaxMs: u.loginBackoffMaxMs,
      connectTimeoutMs: u.connectTimeoutMs,
      timeoutMs: u.timeoutMs,
      redactor,
    });
  if (!u.token) throw new Error(`${u.name}: a token or a username and password are required`);
  return new QueryTokenCredentials('token', u.tokenSecret ?? u.token, redactor);
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

export interface EmisUpstreamOptions<Name extends string, Fake extends SandboxFake> {
  readonly name: Name;
  readonly title: string;
  readonly prefixes: readonly string[];
  readonly routes: readonly RouteDefinition[];
  readonly sandbox?: UpstreamSandbox<Fake>;
}

/**
 * An EMIS function API (documents, deals): what the two share (error reading and shape, XML paths, the
 * login step or the portal key, the session's readiness facts, the gateway's own `Auth/*` answers), around
 * what each has of its own.
 */
export function emisUpstream<const Name extends string, Fake extends SandboxFake = SandboxFake>(
  o: EmisUpstreamOptions<Name, Fake>,
): UpstreamDeclaration<Name, Fake> {
  return defineUpstream({
    ...o,
    errorMapper: emisErrorMapper,
    errorShape: ({ redactor }) => emisErrorShape(o.prefixes, redactor).extend,
    shapeRequest: shapeEmisRequest,
    config: { credentials: 'token-or-login' },
    credentials: (u, { redactor }) => emisCredentials(u, o.title, redactor),
    readinessFacts: (c) => (c instanceof EmisSessionCredentials ? { session: c.state() } : {}),
    controllers: [createEmisAuthController({ upstream: o.name, prefixes: o.prefixes })],
  });
}
