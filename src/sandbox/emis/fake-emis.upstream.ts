// Shared behaviour of the two EMIS "function" APIs (Documents = /news, DealWatch = /dw), as the EMIS PHP
// client sees them (shared/design/upstreams.md §4, §6.3): paths `/<Class>/<method>/` with exact casing and
// trailing slash, an XML twin under `/xml/…`, GET or POST parameters, `token` (portal key) or `sessionId`
// from `Auth/login/`, errors `{"errors":[{code:<int>,detail}]}` sent with HTTP 200 by default, success
// `{"data":{…,"_type":…},"version":…}`.
import { randomBytes } from 'node:crypto';
import { isRecord } from '../fake-behaviour.js';
import { phpJson } from '../fake-reply.js';
import { FakeRouter } from '../fake-router.js';
import { type AuthResult, type FakeReply, type FakeRequest, FakeUpstream } from '../fake-upstream.js';
import { isoDateTime } from '../data/seeded.js';

/**
 * Error codes the fakes send. 1xxx and 3000–3003 follow the PHP client's exception classes; the
 * 2xxx auth codes, 3004/3005 and 4029 are our choice (the real ones are unknown).
 */
export const EMIS_CODES = {
  BACKEND_ERROR: 1000,
  OUTPUT_FORMAT_UNKNOWN: 1040,
  AUTH_REQUIRED: 2000,
  INVALID_CREDENTIALS: 2001,
  SESSION_EXPIRED: 2002,
  INVALID_TOKEN: 2003,
  API_METHOD_NOT_SPECIFIED: 3000,
  PARAMETER_MISSING: 3002,
  NOT_FOUND: 3004,
  INVALID_PARAMETER: 3005,
  TOO_MANY_REQUESTS: 4029,
} as const;

export const EMIS_VERSION = '1.3.2';

/** HTTP status of an EMIS error code in `http4xx` mode. */
export function emisHttpStatus(code: number): number {
  if (code >= 2000 && code < 3000) return 401;
  if (code === EMIS_CODES.NOT_FOUND) return 404;
  if (code >= 3000 && code < 4000) return 400;
  if (code === EMIS_CODES.TOO_MANY_REQUESTS) return 429;
  return 500;
}

function codeForStatus(status: number): number {
  if (status === 401 || status === 403) return EMIS_CODES.INVALID_TOKEN;
  if (status === 404) return EMIS_CODES.NOT_FOUND;
  if (status === 429) return EMIS_CODES.TOO_MANY_REQUESTS;
  if (status >= 400 && status < 500) return EMIS_CODES.INVALID_PARAMETER;
  return EMIS_CODES.BACKEND_ERROR;
}

export interface FakeEmisOptions {
  /** Portal key accepted as `token`. */
  token: string;
  /** Credentials for `Auth/login/`; without them every login fails. */
  username?: string;
  password?: string;
  /** Session lifetime (default one day, as the vendor's). */
  sessionTtlMs?: number;
  /** `http200` (default): API errors come with HTTP 200 as the PHP client tolerates; `http4xx`: with a matching status. */
  errorStatus?: 'http200' | 'http4xx';
  now?: () => number;
}

export interface EmisCtx {
  req: FakeRequest;
  /** Query and POST body parameters together. */
  params: URLSearchParams;
  credential: string;
  xml: boolean;
}

export type EmisHandler = (ctx: EmisCtx) => FakeReply;

/**
 * A session id as a PHP portal hands one out: base64 with its full alphabet. Always with `/`, `+` and `=`,
 * so every answer that echoes one shows the escapings a PHP stack writes (`\/` in JSON, `%2F` in a URL).
 */
function newSessionId(): string {
  return `${randomBytes(9).toString('base64')}/${randomBytes(9).toString('base64')}+${randomBytes(4).toString('base64')}`;
}

/** The parameter a link or echo carries the credential in: the portal key, or a login session. */
export function credentialParam(credential: string, token: string): string {
  return `${credential === token ? 'token' : 'sessionId'}=${encodeURIComponent(credential)}`;
}

export class EmisError extends Error {
  constructor(
    readonly code: number,
    readonly detail: string,
  ) {
    super(detail);
  }
}

function paramsOf(req: FakeRequest): URLSearchParams {
  const params = new URLSearchParams(req.query);
  const type = String(req.headers['content-type'] ?? '');
  if (req.body.length > 0 && (type.includes('form') || type === '')) {
    for (const [k, v] of new URLSearchParams(req.body.toString('utf8'))) params.append(k, v);
  }
  return params;
}

export abstract class FakeEmisUpstream extends FakeUpstream {
  readonly token: string;
  sessionTtlMs: number;
  errorStatus: 'http200' | 'http4xx';
  private readonly username?: string;
  private readonly password?: string;
  private readonly router = new FakeRouter<EmisHandler>();
  private readonly sessions = new Map<string, { username: string; expiresAt: number }>();
  private loginCount = 0;

  protected constructor(kind: string, basePath: string, opts: FakeEmisOptions) {
    super({ kind, basePath, now: opts.now });
    this.token = opts.token;
    this.username = opts.username;
    this.password = opts.password;
    this.sessionTtlMs = opts.sessionTtlMs ?? 86_400_000;
    this.errorStatus = opts.errorStatus ?? 'http200';
    this.registerAuth();
  }

  /** PHP's `json_encode` with default flags: `\/` for `/`, `\uXXXX` beyond ASCII. */
  protected override encodeJson(value: unknown): string {
    return phpJson(value);
  }

  /** Successful `Auth/login/` calls since start or the last reset(). */
  get logins(): number {
    return this.loginCount;
  }

  get activeSessions(): number {
    const now = this.now();
    return [...this.sessions.values()].filter((s) => s.expiresAt > now).length;
  }

  /** Ends every session now: the next call with one gets "Session expired". */
  expireSessions(): number {
    const n = this.sessions.size;
    this.sessions.clear();
    return n;
  }

  protected override resetState(): void {
    // Sessions survive a reset on purpose: a gateway holding one should not see a spurious expiry.
    this.loginCount = 0;
  }

  /** Registers `/<Class>/<method>/` for GET and POST (EMIS functions take either). */
  protected route(fn: string, handler: EmisHandler): void {
    this.router.add('GET', `/${fn}/`, handler);
    this.router.add('POST', `/${fn}/`, handler);
  }

  /** Success body with the vendor's `version` beside `data`. */
  protected ok(data: unknown, xml: boolean): FakeReply {
    return { status: 200, json: { data, version: EMIS_VERSION }, xml };
  }

  protected apiError(code: number, detail: string, xml = false): FakeReply {
    const status = this.errorStatus === 'http200' ? 200 : emisHttpStatus(code);
    return { status, json: { errors: [{ code, detail }] }, xml };
  }

  protected override errorReply(status: number, message?: string): FakeReply {
    return {
      status,
      json: { errors: [{ code: codeForStatus(status), detail: message ?? `HTTP ${status}` }] },
    };
  }

  protected override controlExtra(method: string, name: string): FakeReply | undefined {
    if (method === 'POST' && name === 'expire-sessions') return { json: { expired: this.expireSessions() } };
    if (method === 'GET' && name === 'sessions') {
      return { json: { active: this.activeSessions, logins: this.logins } };
    }
    return undefined;
  }

  private split(req: FakeRequest): { path: string; xml: boolean } {
    return req.path.startsWith('/xml/')
      ? { path: req.path.slice(4), xml: true }
      : { path: req.path, xml: false };
  }

  protected override authenticate(req: FakeRequest): AuthResult {
    const { path, xml } = this.split(req);
    if (path === '/Auth/login/') return { credential: '' };
    const params = paramsOf(req);
    const token = params.get('token');
    const sessionId = params.get('sessionId');
    if (token !== null && token !== '') {
      return token === this.token
        ? { credential: token }
        : { reply: this.apiError(EMIS_CODES.INVALID_TOKEN, 'Invalid token', xml) };
    }
    if (sessionId !== null && sessionId !== '') {
      const session = this.sessions.get(sessionId);
      if (session && session.expiresAt > this.now()) return { credential: sessionId };
      this.sessions.delete(sessionId);
      return { reply: this.apiError(EMIS_CODES.SESSION_EXPIRED, 'Session expired', xml) };
    }
    return {
      reply: this.apiError(EMIS_CODES.AUTH_REQUIRED, 'Authentication required: pass token or sessionId', xml),
    };
  }

  protected override handle(req: FakeRequest, credential: string): FakeReply {
    const { path, xml } = this.split(req);
    const match = this.router.match(req.method, path);
    if (match.kind !== 'found') {
      return withDebug(
        this.apiError(EMIS_CODES.API_METHOD_NOT_SPECIFIED, `Unknown API method ${req.method} ${path}`, xml),
        req,
        credential,
      );
    }
    let reply: FakeReply;
    try {
      reply = match.handler({ req, params: paramsOf(req), credential, xml });
    } catch (err) {
      if (err instanceof EmisError) reply = this.apiError(err.code, err.detail, xml);
      else throw err;
    }
    return withDebug(reply, req, credential);
  }

  private registerAuth(): void {
    this.route('Auth/login', ({ params, xml }) => {
      const username = params.get('username');
      const password = params.get('password');
      if (!username || password === null) {
        return this.apiError(EMIS_CODES.PARAMETER_MISSING, 'Missing parameter: username and password', xml);
      }
      if (this.username === undefined || username !== this.username || password !== this.password) {
        return this.apiError(EMIS_CODES.INVALID_CREDENTIALS, 'Invalid username or password', xml);
      }
      const sessionId = newSessionId();
      this.sessions.set(sessionId, { username, expiresAt: this.now() + this.sessionTtlMs });
      this.loginCount++;
      return { status: 200, json: { data: { sessionId } }, xml };
    });
    this.route('Auth/logout', ({ params, xml }) => {
      const sessionId = params.get('sessionId');
      if (sessionId) this.sessions.delete(sessionId);
      return this.ok({ loggedOut: true }, xml);
    });
    this.route('Auth/getUserData', ({ params, xml }) => {
      const session = this.sessions.get(params.get('sessionId') ?? '');
      return this.ok(
        {
          // No `_type`: the client ships no user class, and an unknown one would be a PHP fatal error.
          username: session?.username ?? this.username ?? 'portal-key-user',
          customerId: 4410,
          products: ['news', 'dw'],
          ...(session ? { sessionExpires: `${isoDateTime(session.expiresAt)}+0000` } : {}),
        },
        xml,
      );
    });
  }
}

/**
 * An API error as a PHP stack in debug mode answers it: a `debug` field with the request URI as received
 * (the credential percent-encoded in it) and the credential itself, both written by `json_encode` (`\/`).
 * The gateway must scrub both before any consumer sees them.
 */
function withDebug(reply: FakeReply, req: FakeRequest, credential: string): FakeReply {
  // Login errors echo nothing: the login call carries no credential yet.
  if (credential === '' || !('json' in reply) || !isRecord(reply.json) || !('errors' in reply.json))
    return reply;
  return { ...reply, json: { ...reply.json, debug: { requestUri: req.recorded.url, credential } } };
}

/** Parses a non-negative integer parameter, throwing an EMIS error when it is malformed. */
export function emisInt(params: URLSearchParams, name: string, fallback: number): number {
  const raw = params.get(name);
  if (raw === null || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new EmisError(EMIS_CODES.INVALID_PARAMETER, `Invalid parameter: ${name}`);
  return Number(raw);
}

/** A required parameter, or an EMIS PARAMETER_MISSING error. */
export function emisRequired(value: string | null | undefined, name: string): string {
  if (value === null || value === undefined || value === '') {
    throw new EmisError(EMIS_CODES.PARAMETER_MISSING, `Missing parameter: ${name}`);
  }
  return value;
}
