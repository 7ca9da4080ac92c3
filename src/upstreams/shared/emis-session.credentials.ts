import { Logger } from '@nestjs/common';
import { Pool, type Dispatcher } from 'undici';
import type { ErrorCode } from '../../core/errors/error-codes.js';
import { GatewayError } from '../../core/errors/gateway-error.js';
import type { SecretRedactor } from '../../core/logging/secret-redactor.js';
import type { ProxyRequest, UpstreamCredentials } from '../../proxy/pipeline.types.js';
import { transportError, transportFailureOf } from '../../proxy/transport/transport-errors.js';
import { emisErrorMapper } from './emis-error.mapper.js';
import { credentialIdOf } from './static-token.credentials.js';
import type { LiveSecret } from '../../config/atrium-config.js';

export interface EmisSessionOptions {
  /** Upstream name (`documents`), for errors and logs. */
  readonly upstream: string;
  /** "the document service", for messages. */
  readonly title: string;
  /** The upstream's base URL (`https://api.emis.com/news`); the login is `<base>/Auth/login/`. */
  readonly baseUrl: string;
  readonly username: string;
  readonly password: string;
  /** The password kept current from its file: a change is used by the next login, at once. */
  readonly passwordSecret?: LiveSecret;
  /** Assumed lifetime of a session (the vendor's last a day). */
  readonly sessionTtlMs: number;
  /** Renew this long before the assumed expiry. */
  readonly refreshMarginMs: number;
  /** First pause after a failed login; doubles per consecutive failure up to `backoffMaxMs`. */
  readonly backoffMs: number;
  readonly backoffMaxMs: number;
  readonly connectTimeoutMs: number;
  /** Deadline of one login or logout call. */
  readonly timeoutMs: number;
  readonly redactor: Pick<SecretRedactor, 'register' | 'unregister' | 'redact'>;
  readonly now?: () => number;
  readonly logger?: Pick<Logger, 'log' | 'warn'>;
}

interface Session {
  readonly id: string;
  readonly createdAt: number;
  readonly refreshAt: number;
  readonly expiresAt: number;
}

export type SessionState = 'none' | 'active' | 'refreshing' | 'backoff';

const MAX_ANSWER = 65_536;
/** The query parameter a call carries its session in. */
const SESSION_PARAM = 'sessionId';

/**
 * The session a call was sent with: the last `sessionId` in its query (appended last by inject, after the
 * consumer's own were stripped), so a stale rejection is told from a fresh one without a table of calls.
 */
function sentWith(req: ProxyRequest): string | undefined {
  for (let i = req.query.length - 1; i >= 0; i--)
    if (req.query[i][0] === SESSION_PARAM) return req.query[i][1];
  return undefined;
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

function validate(o: EmisSessionOptions): URL {
  if (!o.username || !o.password) throw new Error(`${o.upstream} login: username and password required`);
  for (const k of ['sessionTtlMs', 'backoffMs', 'backoffMaxMs', 'connectTimeoutMs', 'timeoutMs'] as const)
    if (!(o[k] > 0)) throw new Error(`${o.upstream} login: ${k} must be > 0`);
  if (!(o.refreshMarginMs >= 0 && o.refreshMarginMs < o.sessionTtlMs))
    throw new Error(`${o.upstream} login: refreshMarginMs must be in [0, sessionTtlMs)`);
  if (o.backoffMs > o.backoffMaxMs) throw new Error(`${o.upstream} login: backoffMs exceeds backoffMaxMs`);
  const url = new URL(o.baseUrl);
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`${o.upstream} login: base URL must be http or https`);
  return url;
}

/**
 * The EMIS login step (upstreams.md §4): `Auth/login/` with username and password gives a session id that
 * later calls carry as `sessionId`. One session per credential is shared by every request:
 * - lazy: the first request logs in; concurrent requests wait for that one login (single flight);
 * - renewed ahead of its expiry (in the background, the old session serving meanwhile), and once when the
 *   upstream rejects it (`onAuthFailure`; the credentials stage then retries the call once);
 * - a failing login backs off (doubling pauses), and requests during the pause fail fast without calling
 *   the vendor, so a wrong password never becomes a login storm; a fresh session rejected again is not
 *   renewed again until a pause has passed;
 * - session ids are registered with the SecretRedactor (the previous one is kept while in-flight requests
 *   may still echo it) and are never logged; `close()` logs out.
 * The password travels in a form body, never in a URL.
 */
export class EmisSessionCredentials implements UpstreamCredentials {
  readonly id: string;
  private readonly logger: Pick<Logger, 'log' | 'warn'>;
  private readonly now: () => number;
  private readonly pool: Pool;
  private readonly basePath: string;
  private readonly title: string;
  private current?: Session;
  private retiredId?: string;
  private pending?: Promise<Session>;
  private list: readonly string[];
  private failures = 0;
  private blockedUntil = 0;
  private lastError?: GatewayError;
  private authReloginGap: number;
  private lastAuthReloginAt = Number.NEGATIVE_INFINITY;
  private nextAuthReloginAt = 0;
  private closed = false;
  /** The last session the vendor accepted a call with: its rejection is an expiry, not a broken login. */
  private acceptedId?: string;
  /** Login calls made (successful or not) and successful ones: operator facts and tests. */
  loginAttempts = 0;
  logins = 0;
  private password: string;

  constructor(private readonly opts: EmisSessionOptions) {
    const url = validate(opts);
    this.id = credentialIdOf('login', `${url.origin}${url.pathname}|${opts.username}`);
    this.logger = opts.logger ?? new Logger(`${capitalise(opts.upstream)}Session`);
    this.now = opts.now ?? Date.now;
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.title = capitalise(opts.title);
    this.authReloginGap = opts.backoffMs;
    this.pool = new Pool(url.origin, {
      connections: 2,
      keepAliveTimeout: 10_000,
      connect: { timeout: opts.connectTimeoutMs },
      headersTimeout: opts.timeoutMs,
      bodyTimeout: opts.timeoutMs,
    });
    this.password = opts.password;
    opts.redactor.register(opts.password);
    this.list = [opts.password];
    opts.passwordSecret?.onChange((next) => {
      opts.redactor.register(next);
      this.password = next;
      // A login refused with the old password is not waited out: the new one is tried by the next call.
      this.blockedUntil = 0;
      this.refreshList();
    });
  }

  inject(req: ProxyRequest): void | Promise<void> {
    const s = this.current;
    const now = this.now();
    if (s && now < s.expiresAt) {
      // Renew ahead of the expiry in the background; this request still uses the live session.
      if (now >= s.refreshAt && !this.pending && now >= this.blockedUntil && !this.closed)
        this.login('renewal').catch(() => undefined);
      req.query.push([SESSION_PARAM, s.id]);
      return;
    }
    return this.login(s ? 'expiry' : 'first use').then((fresh) => {
      req.query.push([SESSION_PARAM, fresh.id]);
    });
  }

  onAccepted(req: ProxyRequest): void {
    const used = sentWith(req);
    if (used !== undefined && used === this.current?.id) this.acceptedId = used;
  }

  secrets(): readonly string[] {
    return this.list;
  }

  async onAuthFailure(req: ProxyRequest): Promise<boolean> {
    const used = sentWith(req);
    // No session was sent: the login itself failed, and it has its own backoff.
    if (used === undefined || this.closed) return false;
    // Already replaced or dropped by a concurrent request: retry with whatever comes next.
    if (this.current?.id !== used) return true;
    const now = this.now();
    // A session the vendor has accepted and now rejects has expired: renew it at once, whenever that is.
    // A session that was rejected without ever being accepted (the one a re-login just gave) means
    // something other than expiry is wrong: pause re-logins, doubling the pause, so it is no login storm.
    const expired = this.acceptedId === used;
    if (!expired && now < this.nextAuthReloginAt) return false;
    if (expired || now - this.lastAuthReloginAt > this.opts.backoffMaxMs)
      this.authReloginGap = this.opts.backoffMs;
    this.lastAuthReloginAt = now;
    this.nextAuthReloginAt = now + this.authReloginGap;
    this.authReloginGap = Math.min(this.authReloginGap * 2, this.opts.backoffMaxMs);
    this.retire(used);
    this.current = undefined;
    this.refreshList();
    try {
      await this.login('rejected session');
      return true;
    } catch {
      return false;
    }
  }

  /** Facts for readiness: never the session id. */
  state(): { state: SessionState; expiresInSeconds?: number; loginFailures: number; logins: number } {
    const now = this.now();
    const s = this.current && now < this.current.expiresAt ? this.current : undefined;
    const state: SessionState =
      now < this.blockedUntil && this.failures > 0
        ? 'backoff'
        : this.pending
          ? 'refreshing'
          : s
            ? 'active'
            : 'none';
    return {
      state,
      ...(s ? { expiresInSeconds: Math.max(0, Math.floor((s.expiresAt - now) / 1000)) } : {}),
      loginFailures: this.failures,
      logins: this.logins,
    };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.pending) await this.pending.catch(() => undefined);
    const s = this.current;
    this.current = undefined;
    try {
      if (s && this.now() < s.expiresAt) await this.logout(s.id);
    } catch (e) {
      this.logger.warn(`${this.opts.upstream}: logout on shutdown failed (${(e as Error).message})`);
    } finally {
      await this.pool.close().catch(() => undefined);
      if (s) this.opts.redactor.unregister(s.id);
      if (this.retiredId) this.opts.redactor.unregister(this.retiredId);
    }
  }

  // ------------------------------------------------------------------------------------------

  /** Single flight: concurrent callers share one login; during a backoff pause they fail fast. */
  private login(reason: string): Promise<Session> {
    if (this.pending) return this.pending;
    if (this.closed)
      return Promise.reject(
        new GatewayError('UPSTREAM_UNAVAILABLE', {
          upstream: this.opts.upstream,
          message: `${this.title} session is closed (the gateway is shutting down).`,
        }),
      );
    const now = this.now();
    if (this.lastError && now < this.blockedUntil) return Promise.reject(this.backoffError(now));
    const p = this.doLogin(reason);
    this.pending = p;
    const clear = () => {
      if (this.pending === p) this.pending = undefined;
    };
    p.then(clear, clear);
    return p;
  }

  private async doLogin(reason: string): Promise<Session> {
    this.loginAttempts++;
    try {
      const id = await this.callLogin();
      const now = this.now();
      const session: Session = {
        id,
        createdAt: now,
        refreshAt: now + this.opts.sessionTtlMs - this.opts.refreshMarginMs,
        expiresAt: now + this.opts.sessionTtlMs,
      };
      this.opts.redactor.register(id);
      if (this.current) this.retire(this.current.id);
      this.current = session;
      this.refreshList();
      this.failures = 0;
      this.blockedUntil = 0;
      this.lastError = undefined;
      this.logins++;
      this.logger.log(`${this.opts.upstream}: logged in (${reason})`);
      return session;
    } catch (e) {
      const err =
        e instanceof GatewayError
          ? e
          : new GatewayError('UPSTREAM_ERROR', { upstream: this.opts.upstream, cause: e });
      this.failures++;
      const pause = Math.min(this.opts.backoffMs * 2 ** (this.failures - 1), this.opts.backoffMaxMs);
      this.blockedUntil = this.now() + pause;
      this.lastError = err;
      this.logger.warn(
        this.opts.redactor.redact(
          `${this.opts.upstream}: login failed (${reason}): ${err.code}` +
            `${err.upstreamCode !== undefined ? ` ${err.upstreamCode}` : ''}; next attempt in ${pause} ms`,
        ),
      );
      throw err;
    }
  }

  /** Keeps the previous session id scrubbed while in-flight requests may still carry it. */
  private retire(id: string): void {
    if (this.retiredId && this.retiredId !== id) this.opts.redactor.unregister(this.retiredId);
    this.retiredId = id;
  }

  private refreshList(): void {
    const l = [this.password];
    if (this.current) l.push(this.current.id);
    if (this.retiredId && this.retiredId !== this.current?.id) l.push(this.retiredId);
    this.list = l;
  }

  private backoffError(now: number): GatewayError {
    const last = this.lastError!;
    const seconds = Math.max(1, Math.ceil((this.blockedUntil - now) / 1000));
    return new GatewayError(last.code, {
      upstream: this.opts.upstream,
      upstreamStatus: last.upstreamStatus,
      upstreamCode: last.upstreamCode,
      message: `${last.message} The gateway retries the login in ${seconds} s.`,
      retryAfterSeconds: last.retryable ? seconds : undefined,
      fromUpstream: last.fromUpstream,
    });
  }

  private async post(fn: string, form: Record<string, string>): Promise<{ status: number; body: Buffer }> {
    let res: Dispatcher.ResponseData;
    try {
      res = await this.pool.request({
        method: 'POST',
        path: `${this.basePath}/${fn}/`,
        headers: {
          'content-type': 'application/x-www-form-urlencoded',
          accept: 'application/json',
          'user-agent': 'Atrium-Gateway',
        },
        body: new URLSearchParams(form).toString(),
      });
    } catch (e) {
      throw this.transportError(e);
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const c of res.body) {
        size += (c as Buffer).length;
        if (size > MAX_ANSWER) {
          res.body.destroy();
          throw transportError(
            'tooLarge',
            this.opts.upstream,
            `${this.title} sent an oversized answer to the gateway's ${fn} call.`,
          );
        }
        chunks.push(c as Buffer);
      }
    } catch (e) {
      throw e instanceof GatewayError ? e : this.transportError(e);
    }
    return { status: res.statusCode, body: Buffer.concat(chunks) };
  }

  private async callLogin(): Promise<string> {
    const { status, body } = await this.post('Auth/login', {
      username: this.opts.username,
      password: this.password,
    });
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      parsed = undefined;
    }
    const sessionId = (parsed as { data?: { sessionId?: unknown } } | undefined)?.data?.sessionId;
    const isError = status < 200 || status >= 300 || emisErrorMapper.isErrorBody!(body, 'application/json');
    if (!isError && typeof sessionId === 'string' && sessionId.length > 0) return sessionId;
    const info = emisErrorMapper.read(status, body, 'application/json');
    // A refused login is an operator problem (502) unless the vendor says it is busy or broken.
    let code: ErrorCode = 'UPSTREAM_AUTH_FAILED';
    if (info.code === 'UPSTREAM_RATE_LIMITED' || status === 429) code = 'UPSTREAM_RATE_LIMITED';
    else if (status >= 500 || (!isError && info.upstreamCode === undefined)) code = 'UPSTREAM_ERROR';
    const detail = info.message ? ` (${this.opts.redactor.redact(info.message).slice(0, 200)})` : '';
    return Promise.reject(
      new GatewayError(code, {
        upstream: this.opts.upstream,
        upstreamStatus: status,
        upstreamCode: info.upstreamCode ?? (isError ? undefined : 'NO_SESSION_ID'),
        message:
          code === 'UPSTREAM_AUTH_FAILED'
            ? `${this.title} rejected the gateway's login; operators have been alerted.${detail}`
            : `${this.title} failed to answer the gateway's login.${detail}`,
        retryAfterSeconds: code === 'UPSTREAM_RATE_LIMITED' ? 30 : undefined,
        fromUpstream: true,
      }),
    );
  }

  private async logout(sessionId: string): Promise<void> {
    const { status } = await this.post('Auth/logout', { sessionId });
    if (status >= 200 && status < 300) this.logger.log(`${this.opts.upstream}: logged out`);
  }

  /** The proxy's transport-error taxonomy (refused/reset → 503, timeout → 504), in the login's words. */
  private transportError(e: unknown): GatewayError {
    const failure = transportFailureOf(e);
    return transportError(
      failure,
      this.opts.upstream,
      failure === 'timeout' || failure === 'refused' || failure === 'reset' || failure === 'unreachable'
        ? `${this.title} could not be reached for the gateway's login.`
        : `${this.title} sent a broken answer to the gateway's login.`,
      e,
    );
  }
}
