// Fake CEIC macroeconomic API v2 (design notes: upstreams.md §2): base path /v2, key as `token` query or
// raw `Authorization: <key>`, envelopes {"data":[…]} / {"data":{total,items,facets}}, ResponseError
// bodies {"errors":{status,code,message}}, XML on request, partial series errors on HTTP 200. The routes
// live in one module per area beside this file; the data they serve in the *.data.ts files.
import { randomBytes } from 'node:crypto';
import { FakeRouter } from '../fake-router.js';
import { type AuthResult, type FakeReply, type FakeRequest, FakeUpstream } from '../fake-upstream.js';
import { readFields, str } from '../fake-params.js';
import { dictionaryRoutes } from './dictionary.routes.js';
import { dumpRoutes } from './dumps.routes.js';
import { feedRoutes } from './feeds.routes.js';
import { filterRoutes } from './filters.routes.js';
import { insightRoutes } from './insights.routes.js';
import { layoutRoutes } from './layout.routes.js';
import { type MacroEnv, type MacroHandler, macroError, notFound, ok } from './macro-errors.js';
import { localize, negotiateFormat, negotiateLang } from './macro-negotiation.js';
import { MacroState } from './macro-state.js';
import { releaseRoutes } from './releases.routes.js';
import { seriesRoutes } from './series.routes.js';
import { userSeriesRoutes } from './user-series.routes.js';

export { MACRO_LANGS, type MacroLang, negotiateFormat, negotiateLang } from './macro-negotiation.js';
export { macroError } from './macro-errors.js';

export interface FakeMacroOptions {
  token: string;
  /** Enables POST /login (the gateway never forwards it; here for completeness). */
  username?: string;
  password?: string;
  now?: () => number;
}

export class FakeMacroUpstream extends FakeUpstream {
  /** The key the vendor accepts; `rotateToken` replaces it. */
  token: string;
  private readonly username?: string;
  private readonly password?: string;
  private readonly router = new FakeRouter<MacroHandler>();
  private readonly sessions = new Set<string>();
  private readonly state = new MacroState();

  constructor(opts: FakeMacroOptions) {
    super({ kind: 'macro', basePath: '/v2', now: opts.now });
    this.token = opts.token;
    this.username = opts.username;
    this.password = opts.password;
    this.registerRoutes();
  }

  /** A new key generated at the vendor: the old one is refused from now on (the spec, part 5). */
  rotateToken(next: string): void {
    this.token = next;
  }

  protected override resetState(): void {
    this.state.reset();
  }

  protected override errorReply(status: number, message?: string): FakeReply {
    return macroError(status, undefined, message);
  }

  protected override authenticate(req: FakeRequest): AuthResult {
    if (req.path === '/login' || req.path.startsWith('/logout/') || req.path.startsWith('/downloads/')) {
      return { credential: '' };
    }
    const given = [req.query.get('token'), req.headers.authorization].filter(
      (v): v is string => typeof v === 'string' && v !== '',
    );
    if (given.length === 0) {
      return { reply: macroError(401, 'MISSED_API_TOKEN', 'Please use access token to get data') };
    }
    const valid = given.find((v) => v === this.token || this.sessions.has(v));
    return valid !== undefined ? { credential: valid } : { reply: macroError(401) };
  }

  protected override handle(req: FakeRequest): FakeReply {
    const match = this.router.match(req.method, req.path);
    if (match.kind === 'not-found') return notFound('Resource');
    if (match.kind === 'method-not-allowed') {
      return { ...macroError(405), headers: { allow: match.allowed.join(', ') } };
    }
    const format = negotiateFormat(req);
    if (format === undefined) return macroError(415);
    this.state.load();
    const reply = match.handler({ req, params: match.params });
    if (!('json' in reply) || (reply.status ?? 200) >= 300) return reply;
    return { ...reply, json: localize(reply.json, negotiateLang(req)), xml: format === 'xml' };
  }
  private registerRoutes(): void {
    const r = this.router;
    const get = (p: string, h: MacroHandler) => r.add('GET', p, h);

    // Session login, as the CEIC Python facade does it.
    r.add('POST', '/login', ({ req }) => {
      const fields = readFields(req);
      const body = 'fields' in fields ? fields.fields : {};
      const login =
        req.query.get('login') ?? req.query.get('username') ?? str(body.login) ?? str(body.username);
      const password = req.query.get('password') ?? str(body.password);
      if (login === undefined || login === null || login === '') {
        return macroError(400, 'MISSED_USER_LOGIN', 'Please provide user login');
      }
      if (this.username === undefined || login !== this.username || password !== this.password) {
        return macroError(401, 'ERR_INVALID_USER_PASSWORD', 'Invalid user name or password');
      }
      const session = randomBytes(16).toString('hex');
      this.sessions.add(session);
      return ok({ data: { session } });
    });
    r.add('DELETE', '/logout/:session', ({ params }) => {
      const destroyed = this.sessions.delete(params.session ?? '');
      return ok({ data: { session: params.session, destroyed } });
    });
    // Download links handed out by dumps and insight downloads point here (signed-link style, no key).
    get('/downloads/:name', ({ params }) =>
      this.fileReply('application/octet-stream', params.name ?? 'file'),
    );
    const env: MacroEnv = {
      state: this.state,
      now: () => this.now(),
      url: () => this.url,
      fileReply: (contentType, filename) => this.fileReply(contentType, filename),
    };
    for (const register of [
      seriesRoutes,
      userSeriesRoutes,
      insightRoutes,
      layoutRoutes,
      dictionaryRoutes,
      filterRoutes,
      dumpRoutes,
      feedRoutes,
      releaseRoutes,
    ]) {
      register(r, env);
    }
  }
}
