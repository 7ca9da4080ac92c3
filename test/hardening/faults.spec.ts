import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import type { UpstreamName } from '../../src/upstreams/index.js';
import { ProxyService } from '../../src/proxy/proxy.service.js';
import { testConsumer } from '../helpers/consumers.js';
import { startGateway, type GatewayHandle } from '../helpers/gateway.js';
import { met as waitFor } from '../helpers/eventually.js';
import { call, checkEnvelope, type Answer } from '../helpers/gateway-client.js';
import { writeSuiteResults, type CaseResult } from '../helpers/results.js';
import {
  emisLogin,
  oversize,
  resetMidBody,
  ScriptedUpstream,
  sendJson,
  sendText,
  trickle,
  type Script,
  type ScriptContext,
} from '../helpers/scripted-upstream.js';

// Faults from the vendor side. One table of cases; each runs against a fresh
// in-process gateway in front of a scripted fake vendor (test/helpers/scripted-upstream.ts) and
// is judged on four things: the documented envelope and status, no answer later than the route deadline +
// 100 ms, nothing invalid cached (the repeat after the vendor recovers is a fresh, valid answer), and the
// gateway's sockets back to baseline (nothing left in progress at the vendor, every vendor socket idle in
// the gateway's pools). A case survives when all four hold; the suite counts survived / total.

const DEADLINE_MS = 1500;
const SLACK_MS = 100;
const MAX_RESPONSE_BYTES = 1024 * 1024;
/** Cooldown settings of the 429 cases: a header-less 429 cools for 1 s, no cooldown exceeds 3 s. */
const COOLDOWN_DEFAULT_S = 1;
const COOLDOWN_MAX_S = 3;

const MACRO_TOKEN = 'sbx_test_hardening_macro_c1f0a7';
const COMPANY_TOKEN = 'sbx_test_hardening_company_77e1b2';
const DEALS_TOKEN = 'sbx_test_hardening_deals_9a3d55';
const EMIS_USER = 'hardening-user';
const EMIS_PASSWORD = 'hardening-password-e5c2d8';

const consumer = testConsumer({ id: 'faults-app', write: true });
const auth = { authorization: `Bearer ${consumer.key}` };

type Expected = { status: number; code: string; upstreamCode?: string | number };
type Accept = Expected[] | 'file-abort' | 'valid-200';

interface FaultCase {
  name: string;
  upstream: UpstreamName;
  /** Gateway path; `{n}` becomes a number unique to the run, so no case meets another's cache entry. */
  path: string;
  fault: (fake: ScriptedUpstream) => Script;
  /** Consumer requests during the fault (default 1), concurrent unless `sequential`. */
  requests?: number;
  sequential?: boolean;
  /** One more request right after the fault's answers (a cooldown must answer it without the vendor). */
  repeatDuringFault?: boolean;
  accept: Accept;
  /** Extra gateway settings (or a base URL that points nowhere). */
  env?: (fake: ScriptedUpstream) => Promise<Record<string, string>> | Record<string, string>;
  /**
   * After the fault the vendor is healthy again: `fresh` (default) wants a fresh valid answer (not a HIT
   * or STALE copy of what the fault produced); `valid` accepts the fault phase's own answer from the cache
   * (it was valid); `none` when there is no vendor to recover.
   */
  recovery?: 'fresh' | 'valid' | 'none';
  /** How long the recovery may take (cooldowns, login back-off, breaker). */
  recoveryMs?: number;
  checks?: (fake: ScriptedUpstream, answers: Answer[]) => string[];
}

// ---------------------------------------------------------------------------------------------------
// The healthy vendor, and the faults

const wantsXml = (ctx: ScriptContext): boolean =>
  ctx.recorded.query.get('format') === 'xml' ||
  ctx.recorded.path.includes('/xml/') ||
  String(ctx.req.headers.accept ?? '').includes('xml');

const isFile = (ctx: ScriptContext): boolean =>
  /\/visual$|\/getFile\/$|external_download/.test(ctx.recorded.path);

/**
 * What a healthy vendor answers: the path and the non-credential parameter it was asked for, so a stale or
 * foreign body is recognisable (the case's unique number is in one of them).
 */
function healthy(ctx: ScriptContext): void {
  const ref = `${ctx.recorded.path} ${ctx.recorded.query.get('keyword') ?? ''}${ctx.recorded.query.get('id') ?? ''}`;
  if (isFile(ctx)) {
    sendText(ctx.res, 200, Buffer.alloc(4096, 7), {
      'content-type': 'application/octet-stream',
      'content-disposition': 'attachment; filename="file.bin"',
    });
  } else if (wantsXml(ctx))
    sendText(
      ctx.res,
      200,
      `<?xml version="1.0"?><response><data><healthy>true</healthy><ref>${ref}</ref></data></response>`,
      { 'content-type': 'application/xml; charset=utf-8' },
    );
  else sendJson(ctx.res, 200, { data: { healthy: true, ref } });
}

function healthyScript(fake: ScriptedUpstream): Script {
  return emisLogin(fake, () => `session-${fake.logins}`, healthy);
}

/** The fault for data calls; the EMIS login keeps working unless the case scripts it. */
const onData =
  (fn: Script) =>
  (fake: ScriptedUpstream): Script =>
    emisLogin(fake, () => `session-${fake.logins}`, fn);

const status5xx = (status: number): FaultCase => ({
  name: `5xx burst: every call answers ${status}`,
  upstream: 'macro',
  path: '/macro/series/{n}',
  requests: 6,
  fault: onData((c) => sendJson(c.res, status, { errors: { status, code: 'ERR', message: 'backend down' } })),
  accept: [
    status === 504 ? { status: 504, code: 'UPSTREAM_TIMEOUT' } : { status: 502, code: 'UPSTREAM_ERROR' },
  ],
});

function retryAfterCase(
  name: string,
  headers: () => Record<string, string>,
  range: [number, number],
): FaultCase {
  return {
    name: `429 with ${name}`,
    upstream: 'macro',
    path: '/macro/series/{n}',
    repeatDuringFault: true,
    fault: onData((c) =>
      sendJson(
        c.res,
        429,
        { errors: { status: 429, code: 'TOO_MANY_REQUESTS', message: 'slow down' } },
        headers(),
      ),
    ),
    accept: [{ status: 429, code: 'UPSTREAM_RATE_LIMITED' }],
    recoveryMs: (range[1] + 2) * 1000,
    checks: (fake, answers) => {
      const out: string[] = [];
      for (const a of answers) {
        const ra = Number(a.headers['retry-after']);
        if (!(Number.isInteger(ra) && ra >= range[0] && ra <= range[1]))
          out.push(`Retry-After ${a.headers['retry-after']} outside [${range[0]}, ${range[1]}]`);
        const env = checkEnvelope(a);
        if (env.retryAfterSeconds !== ra)
          out.push(`envelope retryAfterSeconds ${env.retryAfterSeconds} ≠ header ${ra}`);
      }
      // The cooldown holds: after a 429 nothing reaches the vendor for at least the shortest cooldown
      // (1 s; a retry of a 429 waits it out first).
      const at = fake.requests.filter((r) => r.path.includes('/series/')).map((r) => r.at);
      for (let i = 1; i < at.length; i++)
        if (at[i] - at[i - 1] < 900) out.push(`a vendor call ${at[i] - at[i - 1]} ms after a 429`);
      return out;
    },
  };
}

const jsonCase = (
  name: string,
  body: string,
  type: string,
  accept: Accept = [{ status: 502, code: 'UPSTREAM_ERROR' }],
): FaultCase => ({
  name,
  upstream: 'macro',
  path: '/macro/series/{n}',
  fault: onData((c) => sendText(c.res, 200, body, { 'content-type': type })),
  accept,
});

const emisErrorOn200 = (name: string, code: number, detail: string, expected: Expected): FaultCase => ({
  name: `errors inside HTTP 200 (EMIS): ${name}`,
  upstream: 'documents',
  path: '/documents/Search/query/?keyword=k{n}',
  fault: onData((c) => sendJson(c.res, 200, { errors: [{ code, detail }] })),
  accept: [expected],
});

async function closedPort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((r) => srv.listen(0, '127.0.0.1', r));
  const port = (srv.address() as AddressInfo).port;
  await new Promise<void>((r) => srv.close(() => r()));
  return port;
}

const bigJson = Buffer.from(
  JSON.stringify({ data: Array.from({ length: 400 }, (_, i) => ({ id: i, pad: 'x'.repeat(100) })) }),
);

const CASES: FaultCase[] = [
  status5xx(500),
  status5xx(502),
  status5xx(503),
  status5xx(504),
  {
    name: '5xx burst shorter than the retries (2 × 503, then healthy)',
    upstream: 'macro',
    path: '/macro/series/{n}',
    fault: (fake) => {
      let failures = 0;
      return emisLogin(
        fake,
        () => 's',
        (c) =>
          failures++ < 2
            ? sendJson(c.res, 503, { errors: { status: 503, code: 'ERR', message: 'busy' } })
            : healthy(c),
      );
    },
    accept: 'valid-200',
    recovery: 'valid',
  },
  {
    name: '5xx burst opens the breaker',
    upstream: 'macro',
    path: '/macro/series/{n}',
    requests: 12,
    sequential: true,
    env: () => ({ UPSTREAM_MACRO_BREAKER_MIN_SAMPLE: '4', UPSTREAM_MACRO_RETRY_ATTEMPTS: '1' }),
    fault: onData((c) => sendJson(c.res, 500, { errors: { status: 500, code: 'ERR', message: 'down' } })),
    accept: [
      { status: 502, code: 'UPSTREAM_ERROR' },
      { status: 503, code: 'UPSTREAM_UNAVAILABLE', upstreamCode: 'CIRCUIT_OPEN' },
    ],
    recoveryMs: 4000,
    checks: (fake, answers) =>
      answers.some((a) => checkEnvelope(a).upstreamCode === 'CIRCUIT_OPEN') && fake.calls('/series/') < 12
        ? []
        : [`breaker never opened (${fake.calls('/series/')} vendor calls for 12 requests)`],
  },
  {
    name: 'slow headers (later than the deadline)',
    upstream: 'macro',
    path: '/macro/series/{n}',
    // Later than any deadline: the headers would come only after the gateway gave up.
    fault: onData(async (c) => {
      await c.untilGone();
      healthy(c);
    }),
    accept: [{ status: 504, code: 'UPSTREAM_TIMEOUT' }],
  },
  {
    name: 'no answer at all (hang)',
    upstream: 'company',
    path: '/company/companies/{n}',
    fault: onData(() => new Promise<void>(() => undefined)),
    accept: [{ status: 504, code: 'UPSTREAM_TIMEOUT' }],
  },
  {
    name: 'slow body (headers at once, the body later than the deadline)',
    upstream: 'macro',
    path: '/macro/series/{n}',
    fault: onData(async (c) => {
      const body = JSON.stringify({ data: { late: true } });
      c.res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(body.length) });
      c.res.flushHeaders();
      await c.untilGone();
      if (!c.gone) c.res.end(body);
    }),
    accept: [{ status: 504, code: 'UPSTREAM_TIMEOUT' }],
  },
  {
    name: 'slow body that completes in time (10 bytes / 40 ms)',
    upstream: 'macro',
    path: '/macro/series/{n}',
    fault: onData((c) =>
      trickle(c, JSON.stringify({ data: { healthy: true, path: c.recorded.path } }), 10, 40),
    ),
    accept: 'valid-200',
    recovery: 'valid',
  },
  {
    name: 'trickling body (1 byte / 100 ms for 5 s)',
    upstream: 'macro',
    path: '/macro/series/{n}',
    fault: onData((c) => trickle(c, `{"data":"${'x'.repeat(40)}"}`, 1, 100)),
    accept: [{ status: 504, code: 'UPSTREAM_TIMEOUT' }],
  },
  {
    name: 'reset before the headers',
    upstream: 'macro',
    path: '/macro/series/{n}',
    fault: onData((c) => void c.req.socket.resetAndDestroy()),
    accept: [{ status: 503, code: 'UPSTREAM_UNAVAILABLE' }],
  },
  {
    name: 'reset mid-body (buffered answer)',
    upstream: 'company',
    path: '/company/companies/{n}',
    fault: onData((c) => resetMidBody(c, bigJson, 20_000, { 'content-type': 'application/json' })),
    accept: [
      { status: 503, code: 'UPSTREAM_UNAVAILABLE' },
      { status: 502, code: 'UPSTREAM_ERROR' },
    ],
  },
  {
    name: 'reset mid-body (streamed file)',
    upstream: 'macro',
    path: '/macro/series/{n}/visual',
    fault: onData((c) =>
      resetMidBody(c, Buffer.alloc(256 * 1024, 1), 100_000, { 'content-type': 'image/png' }),
    ),
    accept: 'file-abort',
  },
  {
    name: 'reset mid-body (streamed file that answers JSON)',
    upstream: 'documents',
    path: '/documents/Search/getFile/?id=f{n}',
    fault: onData((c) => resetMidBody(c, bigJson, 20_000, { 'content-type': 'application/json' })),
    accept: [
      { status: 502, code: 'UPSTREAM_ERROR' },
      { status: 503, code: 'UPSTREAM_UNAVAILABLE' },
    ],
  },
  {
    name: 'oversize body with a declared length',
    upstream: 'macro',
    path: '/macro/series/{n}',
    fault: onData((c) => oversize(c, 3 * MAX_RESPONSE_BYTES, true)),
    accept: [{ status: 429, code: 'RESPONSE_TOO_LARGE', upstreamCode: 'RESPONSE_TOO_LARGE' }],
  },
  {
    name: 'oversize body, chunked (no length)',
    upstream: 'company',
    path: '/company/companies/{n}',
    fault: onData((c) => oversize(c, 3 * MAX_RESPONSE_BYTES, false)),
    accept: [{ status: 429, code: 'RESPONSE_TOO_LARGE', upstreamCode: 'RESPONSE_TOO_LARGE' }],
  },
  jsonCase('malformed JSON: truncated', '{"data":[{"id":1,"name":"trunc', 'application/json'),
  jsonCase(
    'malformed JSON: starts with { and ends with }',
    '{"data": [1, 2,, 3], "x": }',
    'application/json',
  ),
  jsonCase('malformed JSON: a NaN inside braces', '{"data": NaN}', 'application/json; charset=utf-8'),
  jsonCase(
    'HTML as text/html on a JSON route',
    '<!DOCTYPE html><html><body><h1>Maintenance</h1></body></html>',
    'text/html',
  ),
  jsonCase(
    'HTML as application/json on a JSON route',
    '<html><body>Gateway Timeout</body></html>',
    'application/json',
  ),
  jsonCase(
    'wrong content type: XML on a JSON route',
    '<?xml version="1.0"?><response><data>1</data></response>',
    'application/xml',
  ),
  jsonCase(
    'wrong content type: binary on a JSON route',
    '\u0089PNG\r\n\u001a\n\u0000\u0000garbage',
    'application/octet-stream',
  ),
  {
    name: 'malformed XML: truncated, when XML was asked for',
    upstream: 'macro',
    path: '/macro/series/{n}?format=xml',
    fault: onData((c) =>
      sendText(c.res, 200, '<?xml version="1.0"?><response><data><id>1</id><na', {
        'content-type': 'application/xml',
      }),
    ),
    accept: [{ status: 502, code: 'UPSTREAM_ERROR' }],
  },
  {
    name: 'wrong content type: JSON when XML was asked for',
    upstream: 'macro',
    path: '/macro/series/{n}?format=xml',
    fault: onData((c) => sendJson(c.res, 200, { data: { id: 1 } })),
    accept: [{ status: 502, code: 'UPSTREAM_ERROR' }],
  },
  emisErrorOn200('a bad call (3005)', 3005, 'Invalid parameter: limit', {
    status: 400,
    code: 'UPSTREAM_BAD_REQUEST',
  }),
  emisErrorOn200('not found (3004)', 3004, 'Document not found', { status: 404, code: 'NOT_FOUND' }),
  emisErrorOn200('a backend error (1000)', 1000, 'Internal backend error', {
    status: 502,
    code: 'UPSTREAM_ERROR',
  }),
  emisErrorOn200('a rate limit (4029)', 4029, 'Too many requests', {
    status: 429,
    code: 'UPSTREAM_RATE_LIMITED',
  }),
  {
    name: '401 on our key (static token): no retry storm',
    upstream: 'macro',
    path: '/macro/series/{n}',
    requests: 8,
    fault: onData((c) =>
      sendJson(c.res, 401, { errors: { status: 401, code: 'ERR_INVALID_TOKEN', message: 'Invalid token' } }),
    ),
    accept: [{ status: 502, code: 'UPSTREAM_AUTH_FAILED' }],
    checks: (fake) =>
      fake.calls('/series/') <= 8
        ? []
        : [`${fake.calls('/series/')} vendor calls for 8 requests (retried a 401)`],
  },
  {
    name: 'EMIS rejects our session: one re-login, no login storm',
    upstream: 'documents',
    path: '/documents/Search/query/?keyword=k{n}',
    requests: 8,
    fault: onData((c) => sendJson(c.res, 200, { errors: [{ code: 2002, detail: 'Session expired' }] })),
    accept: [{ status: 502, code: 'UPSTREAM_AUTH_FAILED' }],
    recoveryMs: 3000,
    checks: (fake) => (fake.logins <= 3 ? [] : [`${fake.logins} logins for 8 requests (a login storm)`]),
  },
  {
    name: 'EMIS refuses our login: back-off, no login storm',
    upstream: 'documents',
    path: '/documents/Search/query/?keyword=k{n}',
    requests: 8,
    fault: () => (c) =>
      c.recorded.path.endsWith('/Auth/login/')
        ? sendJson(c.res, 200, { errors: [{ code: 2001, detail: 'Invalid username or password' }] })
        : healthy(c),
    accept: [{ status: 502, code: 'UPSTREAM_AUTH_FAILED' }],
    recoveryMs: 3000,
    checks: (fake) => {
      const attempts = fake.calls('/Auth/login/');
      return attempts <= 2 ? [] : [`${attempts} login attempts for 8 requests (a login storm)`];
    },
  },
  {
    name: 'connection refused',
    upstream: 'deals',
    path: '/deals/SearchDeal/getDeals/?keyword=k{n}',
    env: async () => ({ UPSTREAM_DEALS_BASE_URL: `http://127.0.0.1:${await closedPort()}/dw` }),
    fault: healthyScript,
    accept: [{ status: 503, code: 'UPSTREAM_UNAVAILABLE', upstreamCode: 'ECONNREFUSED' }],
    recovery: 'none',
  },
  {
    name: 'a DNS name that does not resolve (.invalid)',
    upstream: 'company',
    path: '/company/companies/{n}',
    env: () => ({ UPSTREAM_COMPANY_BASE_URL: 'http://atrium-hardening-vendor.invalid/company' }),
    fault: healthyScript,
    // A resolver that cannot answer in time makes it a timeout; one that says "no such name", unavailable.
    accept: [
      { status: 503, code: 'UPSTREAM_UNAVAILABLE' },
      { status: 504, code: 'UPSTREAM_TIMEOUT' },
    ],
    recovery: 'none',
  },
  retryAfterCase('Retry-After in seconds (2)', () => ({ 'retry-after': '2' }), [2, 2]),
  retryAfterCase(
    'Retry-After as an HTTP date (+3 s)',
    () => ({ 'retry-after': new Date(Date.now() + 3000).toUTCString() }),
    [2, 3],
  ),
  retryAfterCase(
    'Retry-After as an HTTP date in the past',
    () => ({ 'retry-after': new Date(Date.now() - 60_000).toUTCString() }),
    [1, 1],
  ),
  // Without a usable header the configured default applies, doubled when the retry meets a second 429.
  retryAfterCase('no Retry-After', () => ({}), [COOLDOWN_DEFAULT_S, 2 * COOLDOWN_DEFAULT_S]),
  retryAfterCase('a garbage Retry-After ("soon")', () => ({ 'retry-after': 'soon' }), [
    COOLDOWN_DEFAULT_S,
    2 * COOLDOWN_DEFAULT_S,
  ]),
  retryAfterCase('a negative Retry-After (-5)', () => ({ 'retry-after': '-5' }), [1, 2 * COOLDOWN_DEFAULT_S]),
  retryAfterCase('a huge Retry-After (999999999)', () => ({ 'retry-after': '999999999' }), [
    1,
    COOLDOWN_MAX_S,
  ]),
  retryAfterCase(
    'X-RateLimit-Reset as epoch seconds (+2 s)',
    () => ({ 'x-ratelimit-reset': String(Math.ceil(Date.now() / 1000) + 2) }),
    [1, 3],
  ),
];

// ---------------------------------------------------------------------------------------------------
// Running and judging one case

let seq = Math.floor(Date.now() % 1e6) * 10;

function gatewayEnv(fake: ScriptedUpstream): Record<string, string> {
  const env: Record<string, string> = {
    LOG_LEVEL: 'info',
    ATRIUM_MAX_RESPONSE_BYTES: String(MAX_RESPONSE_BYTES),
    UPSTREAM_MACRO_BASE_URL: `${fake.origin}/v2`,
    UPSTREAM_MACRO_TOKEN: MACRO_TOKEN,
    UPSTREAM_COMPANY_BASE_URL: `${fake.origin}/company`,
    UPSTREAM_COMPANY_TOKEN: COMPANY_TOKEN,
    UPSTREAM_DOCUMENTS_BASE_URL: `${fake.origin}/news`,
    UPSTREAM_DOCUMENTS_USERNAME: EMIS_USER,
    UPSTREAM_DOCUMENTS_PASSWORD: EMIS_PASSWORD,
    UPSTREAM_DEALS_BASE_URL: `${fake.origin}/dw`,
    UPSTREAM_DEALS_TOKEN: DEALS_TOKEN,
  };
  for (const u of ['MACRO', 'COMPANY', 'DOCUMENTS', 'DEALS']) {
    Object.assign(env, {
      [`UPSTREAM_${u}_TIMEOUT_MS`]: String(DEADLINE_MS),
      [`UPSTREAM_${u}_CONNECTIONS`]: '4',
      [`UPSTREAM_${u}_RATE_PER_SEC`]: '1000',
      [`UPSTREAM_${u}_BURST`]: '1000',
      // The breaker has its own case; elsewhere it would mix its 503s into other faults' answers.
      [`UPSTREAM_${u}_BREAKER_MIN_SAMPLE`]: '10000',
      [`UPSTREAM_${u}_BREAKER_OPEN_MS`]: '500',
      [`UPSTREAM_${u}_COOLDOWN_DEFAULT_SECONDS`]: String(COOLDOWN_DEFAULT_S),
      [`UPSTREAM_${u}_COOLDOWN_MAX_SECONDS`]: String(COOLDOWN_MAX_S),
      [`UPSTREAM_${u}_LOGIN_BACKOFF_MS`]: '200',
      [`UPSTREAM_${u}_LOGIN_BACKOFF_MAX_MS`]: '1000',
    });
  }
  return env;
}

interface PoolLike {
  stats: { connected: number; running: number; pending: number; queued: number };
}

/** The gateway's vendor pools (transports and EMIS login pools): the gateway's side of the sockets. */
function gatewayPools(gw: GatewayHandle): PoolLike[] {
  const proxy = gw.app.get(ProxyService);
  const pools: PoolLike[] = [];
  for (const u of proxy.all()) {
    pools.push((u.transport as unknown as { pool: PoolLike }).pool);
    const login = (u.def.credentials as unknown as { pool?: PoolLike }).pool;
    if (login) pools.push(login);
  }
  return pools;
}

async function socketsSettled(gw: GatewayHandle, fake: ScriptedUpstream): Promise<string[]> {
  let last = '';
  const ok = await waitFor(
    () => {
      const pools = gatewayPools(gw).map((p) => p.stats);
      const connected = pools.reduce((n, s) => n + s.connected, 0);
      const busy = pools.reduce((n, s) => n + s.running + s.pending + s.queued, 0);
      last = `vendor: ${fake.inProgress} answers in progress, ${fake.openSockets} sockets open; gateway pools: ${connected} connected, ${busy} busy`;
      return fake.inProgress === 0 && busy === 0 && fake.openSockets <= connected;
    },
    3000,
    50,
  );
  return ok ? [] : [`sockets not back to baseline (${last})`];
}

function judgeAnswer(c: FaultCase, a: Answer, validBody: (a: Answer) => boolean): string[] {
  const out: string[] = [];
  if (c.accept === 'valid-200') {
    if (a.status !== 200 || a.error || !validBody(a))
      out.push(
        `expected a valid 200, got ${a.status}${a.error ? ` (${a.error})` : ''}: ${a.text.slice(0, 120)}`,
      );
    return out;
  }
  if (c.accept === 'file-abort') {
    // A stream already under way can only be cut: the consumer must see it broken, never complete.
    if (a.status === 200) {
      if (!a.error) out.push(`a broken file arrived as a complete 200 (${a.body.length} bytes)`);
      return out;
    }
    const env = checkEnvelope(a);
    if (!env.ok) out.push(env.problem!);
    else if (![502, 503, 504].includes(a.status)) out.push(`file fault answered ${a.status} ${env.code}`);
    return out;
  }
  if (a.error) out.push(`transfer broke: ${a.error}`);
  if (a.status < 400) {
    const want = c.accept.map((e) => `${e.status} ${e.code}`).join(' or ');
    return [...out, `expected ${want}, got ${a.status}: ${JSON.stringify(a.text.slice(0, 80))}`];
  }
  const env = checkEnvelope(a);
  if (!env.ok) return [...out, env.problem!];
  const match = c.accept.find(
    (e) =>
      e.status === a.status &&
      e.code === env.code &&
      (e.upstreamCode === undefined || e.upstreamCode === env.upstreamCode),
  );
  if (!match)
    out.push(
      `got ${a.status} ${env.code}${env.upstreamCode !== undefined ? `/${env.upstreamCode}` : ''}, expected ${c.accept
        .map((e) => `${e.status} ${e.code}${e.upstreamCode ? `/${e.upstreamCode}` : ''}`)
        .join(' or ')}`,
    );
  if (env.upstream !== c.upstream)
    out.push(`envelope names upstream ${env.upstream}, expected ${c.upstream}`);
  // Vendor-shaped extras beside `error` (README "Errors"), so the vendors' own clients still raise.
  if ((a.headers['content-type'] ?? '').includes('xml')) {
    if (c.upstream !== 'company' && !/<errors>[\s\S]*<code>[^<]+<\/code>[\s\S]*<\/errors>/.test(a.text))
      out.push(`XML envelope without <errors><code>: ${a.text.slice(0, 160)}`);
    return out;
  }
  const doc = JSON.parse(a.text) as { errors?: unknown };
  if (c.upstream === 'documents' || c.upstream === 'deals') {
    const e = doc.errors as Array<{ code?: unknown }> | undefined;
    if (!Array.isArray(e) || !Number.isInteger(e[0]?.code)) out.push('EMIS envelope without errors[{code}]');
  } else if (c.upstream === 'macro') {
    const e = doc.errors as { code?: unknown } | undefined;
    if (!e || typeof e !== 'object' || Array.isArray(e))
      out.push('macro envelope without errors{status, code, message}');
  }
  return out;
}

interface Tally {
  pastDeadline: number;
  outsideEnvelope: number;
}

async function runCase(c: FaultCase, tally: Tally): Promise<CaseResult> {
  const failures: string[] = [];
  const fake = await new ScriptedUpstream(() => undefined).start();
  fake.script = healthyScript(fake);
  let gw: GatewayHandle | undefined;
  try {
    const env = { ...gatewayEnv(fake), ...(c.env ? await c.env(fake) : {}) };
    gw = await startGateway({ env, consumers: [consumer.consumer] });
    const n = String(++seq);
    const url = gw.url + c.path.replace('{n}', n);
    const file = /\/visual|getFile/.test(c.path);
    // The healthy vendor's answer names the path it was asked for, hence this case's unique number.
    const isValid = (a: Answer): boolean =>
      file
        ? a.body.length === 4096 && a.body[0] === 7
        : /"healthy":true|<healthy>true</.test(a.text) && a.text.includes(n);

    // The fault.
    fake.script = c.fault(fake);
    const count = c.requests ?? 1;
    const answers: Answer[] = [];
    if (c.sequential) for (let i = 0; i < count; i++) answers.push(await call(url, { headers: auth }));
    else
      answers.push(...(await Promise.all(Array.from({ length: count }, () => call(url, { headers: auth })))));
    // A cooldown must answer the next request at once, without the vendor.
    if (c.repeatDuringFault) answers.push(await call(url, { headers: auth }));
    for (const a of answers) {
      if (a.ms > DEADLINE_MS + SLACK_MS + a.stallMs) {
        tally.pastDeadline++;
        failures.push(`answered after ${Math.round(a.ms)} ms (deadline ${DEADLINE_MS} ms + ${SLACK_MS})`);
      }
      if (a.status >= 400 && !checkEnvelope(a).ok) tally.outsideEnvelope++;
      failures.push(...judgeAnswer(c, a, isValid));
    }
    failures.push(...(c.checks?.(fake, answers) ?? []));

    // The vendor recovers: the repeat must be a fresh, valid answer (nothing invalid was cached).
    fake.script = healthyScript(fake);
    if ((c.recovery ?? 'fresh') !== 'none') {
      let last: Answer | undefined;
      const recovered = await waitFor(
        async () => {
          last = await call(url, { headers: auth });
          if (last.status >= 400 && !checkEnvelope(last).ok) {
            tally.outsideEnvelope++;
            failures.push(`recovery: ${checkEnvelope(last).problem}`);
          }
          return last.status === 200 || (last.status !== 429 && last.status !== 503 && last.status < 500);
        },
        c.recoveryMs ?? 2000,
        100,
      );
      const cache = last?.headers['x-cache'];
      if (!recovered || !last || last.status !== 200)
        failures.push(
          `no valid answer after the vendor recovered (last: ${last?.status} ${last?.text.slice(0, 100)})`,
        );
      else if (!isValid(last))
        failures.push(
          `after recovery the gateway served ${cache ?? 'an answer'} that is not the vendor's: ${last.text.slice(0, 100)}`,
        );
      else if (c.recovery !== 'valid' && (cache === 'HIT' || cache === 'STALE'))
        failures.push(`after recovery a ${cache}: the fault's answer was cached`);
    }
    failures.push(...(await socketsSettled(gw, fake)));
  } catch (e) {
    failures.push(`case crashed: ${(e as Error).stack ?? String(e)}`);
  } finally {
    await gw?.close();
    await fake.close();
  }
  return { name: c.name, survived: failures.length === 0, failures };
}

// ---------------------------------------------------------------------------------------------------

describe('hardening: faults from the vendor side', () => {
  const results: CaseResult[] = [];
  const tally: Tally = { pastDeadline: 0, outsideEnvelope: 0 };
  const started = Date.now();

  afterAll(() => {
    writeSuiteResults({
      suite: 'faults',
      finishedAt: new Date().toISOString(),
      durationMs: Date.now() - started,
      counters: {
        faultCasesSurvived: results.filter((r) => r.survived).length,
        faultCasesTotal: CASES.length,
        answersPastDeadline: tally.pastDeadline,
        errorsOutsideEnvelope: tally.outsideEnvelope,
      },
      cases: results,
    });
  });

  // The 429 cases wait out real cooldowns (1–3 s each): they run side by side; the rest one at a time,
  // so their deadlines are timed on a quiet process.
  const serial = CASES.filter((c) => !c.name.startsWith('429'));
  const cooling = CASES.filter((c) => c.name.startsWith('429'));

  it.each(serial.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const r = await runCase(c, tally);
    results.push(r);
    expect(r.failures).toEqual([]);
  });

  it('429 with every form of Retry-After', async () => {
    const rs = await Promise.all(cooling.map((c) => runCase(c, tally)));
    results.push(...rs);
    expect(rs.filter((r) => !r.survived).map((r) => `${r.name}: ${r.failures.join('; ')}`)).toEqual([]);
  });

  it('counts every case', () => {
    expect(results).toHaveLength(CASES.length);
  });
});
