import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { testConsumer } from '../helpers/consumers.js';
import { startGateway, type GatewayHandle } from '../helpers/gateway.js';
import { captureDir, recordSecret } from '../observability/log-capture.js';
import { eventually } from '../helpers/eventually.js';
import { call, type Answer } from '../helpers/gateway-client.js';
import { writeSuiteResults, type CaseResult } from '../helpers/results.js';
import { ScriptedUpstream, sendJson, sendText, type ScriptContext } from '../helpers/scripted-upstream.js';
import {
  ESCAPINGS,
  findDecoded,
  findSecrets,
  secretForms,
  type SecretForm,
} from '../helpers/secret-forms.js';

// Leaks: hostile fake vendors echo the credential they received — our keys,
// the EMIS session id, the EMIS password — in bodies, headers, redirects, download links, files and error
// messages, literal, URL-encoded, JSON-escaped and base64, with key alphabets that include `/`, `+` and
// `=`. Every answer the consumer gets, every log line the run captured, /metrics, /docs/json,
// /health/ready, the console page and its state, and a batch of the same calls are scanned for every form
// of every secret (support/secret-forms.ts): 0 found.

/** A key from the full alphabet vendors use: base64 (mixed case) sure to hold `/`, `+` and `=`, and hex. */
function awkwardKey(label: string): string {
  const core = randomBytes(24).toString('base64').replace(/=+$/, '');
  return `${label}/${core.slice(0, 14)}+${core.slice(14)}${randomBytes(4).toString('hex')}==`;
}

const KEYS = {
  macro: awkwardKey('Mk'),
  company: awkwardKey('Ck'),
  deals: awkwardKey('Dk'),
};
const EMIS_USER = 'leaks-user';
const EMIS_PASSWORD = awkwardKey('Pw');
const OPERATOR_TOKEN = `leaks-operator-${randomBytes(12).toString('hex')}`;

type Echo = (secret: string, ctx: ScriptContext) => void;

const b64 = (s: string) => Buffer.from(s).toString('base64');
const enc = (s: string) => encodeURIComponent(s);
const lowerEnc = (s: string) => enc(s).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
const jsonEscaped = (s: string) => s.replace(/\//g, '\\/');
const emisPath = (c: ScriptContext) =>
  c.recorded.path.startsWith('/news') || c.recorded.path.startsWith('/dw');

/** How each case's hostile vendor echoes the credential (the consumer asks for a case with `?case=`). */
const ECHOES: Record<string, Echo> = {
  'body, literal': (s, c) => sendJson(c.res, 200, { data: { note: `you called with ${s}`, key: s } }),
  'body, URL-encoded download link': (s, c) =>
    sendJson(c.res, 200, {
      data: {
        downloadLink: `https://vendor.example/downloads/dump.zip?token=${enc(s)}`,
        files: [{ link: `https://vendor.example/Search/getFile/?key=1&sessionId=${lowerEnc(s)}` }],
      },
    }),
  'body, JSON-escaped (PHP)': (s, c) =>
    sendText(
      c.res,
      200,
      `{"data":{"link":"https:\\/\\/vendor.example\\/dl?token=${jsonEscaped(s)}","raw":"${jsonEscaped(s)}"}}`,
      {
        'content-type': 'application/json',
      },
    ),
  'body, base64': (s, c) =>
    sendJson(c.res, 200, {
      data: { auth: b64(s), basic: b64(`${EMIS_USER}:${s}`), url: Buffer.from(s).toString('base64url') },
    }),
  'headers (ETag, Last-Modified, Content-Disposition, Content-Language, Location, Set-Cookie, Link)': (
    s,
    c,
  ) =>
    sendJson(
      c.res,
      200,
      { data: { ok: true } },
      {
        etag: `"${s}"`,
        'last-modified': `${s}`,
        'content-disposition': `attachment; filename="${s}.json"; filename*=UTF-8''${enc(s)}.json`,
        'content-language': s,
        location: `https://vendor.example/?token=${enc(s)}`,
        'set-cookie': `session=${s}; Path=/`,
        link: `<https://vendor.example/next?token=${enc(s)}>; rel="next"`,
        'x-echo': b64(s),
      },
    ),
  'redirect to a link with the key': (s, c) =>
    sendText(c.res, 302, `<a href="https://vendor.example/login?token=${enc(s)}">moved</a> ${s}`, {
      location: `https://vendor.example/login?token=${enc(s)}&raw=${s}`,
      'content-type': 'text/html',
    }),
  'error message quoting the request (400)': (s, c) =>
    emisPath(c)
      ? sendJson(c.res, 200, {
          errors: [{ code: 3005, detail: `Invalid parameter in ${c.recorded.url} (key ${s})` }],
        })
      : sendJson(c.res, 400, {
          errors: { status: 400, code: 'BAD', message: `Invalid request GET ${c.recorded.url}; token ${s}` },
        }),
  'error message, JSON-escaped (500)': (s, c) =>
    sendText(
      c.res,
      500,
      emisPath(c)
        ? `{"errors":[{"code":1000,"detail":"backend failed for https:\\/\\/vendor\\/x?sessionId=${jsonEscaped(s)}"}]}`
        : `{"errors":{"status":500,"code":"ERR","message":"backend failed for https:\\/\\/vendor\\/x?token=${jsonEscaped(s)}"}}`,
      { 'content-type': 'application/json' },
    ),
  'error message, encoded and base64 (503)': (s, c) =>
    sendJson(c.res, 503, {
      errors: emisPath(c)
        ? [{ code: 1000, detail: `retry https://vendor/x?sessionId=${enc(s)} auth=${b64(s)}` }]
        : { status: 503, code: 'DOWN', message: `retry https://vendor/x?token=${enc(s)} auth=${b64(s)}` },
    }),
  'XML body with every form': (s, c) =>
    sendText(
      c.res,
      200,
      `<?xml version="1.0"?><response><data><key>${s}</key><link>https://v/x?token=${enc(s)}</link><b>${b64(s)}</b></data></response>`,
      { 'content-type': 'application/xml' },
    ),
  ...Object.fromEntries(
    Object.entries(ESCAPINGS).map(([name, escape]): [string, Echo] => [
      `every escaping: ${name}`,
      (s, c) => {
        const e = escape(s);
        sendText(
          c.res,
          200,
          `{"data":{"link":"https:\\/\\/vendor.example\\/dl?sessionId=${e}","debug":"key=${e}"}}`,
          {
            'content-type': 'application/json',
            'content-disposition': `attachment; filename="${e}.json"`,
            'content-language': e,
            location: `https://vendor.example/next?token=${e}`,
          },
        );
      },
    ]),
  ),
  'every escaping, in a redirect and an HTML error page': (s, c) => {
    const all = Object.values(ESCAPINGS).map((escape) => escape(s));
    sendText(
      c.res,
      302,
      `<html><body>${all.map((e) => `<a href="https://vendor.example/x?token=${e}">${e}</a>`).join('')}</body></html>`,
      { location: `https://vendor.example/login?token=${all[0]}`, 'content-type': 'text/html' },
    );
  },
  'streamed file: name and a text body quoting the key': (s, c) =>
    sendText(c.res, 200, `source,https://vendor.example/dl?token=${enc(s)}\nkey,${s}\n`, {
      'content-type': 'text/csv',
      'content-disposition': `attachment; filename="${s}.csv"`,
    }),
};

interface LeakCase {
  name: string;
  /** Gateway path with `{case}` and `{n}` slots. */
  path: string;
  echo: string;
}

const INTERFACE_PATHS = {
  macro: '/macro/series/{n}?case={case}',
  company: '/company/companies/{n}?case={case}',
  documents: '/documents/Search/query/?case={case}&keyword=k{n}',
  deals: '/deals/SearchDeal/getDeals/?case={case}&keyword=k{n}',
};

const CASES: LeakCase[] = [];
for (const echo of Object.keys(ECHOES)) {
  if (echo.startsWith('streamed file')) {
    CASES.push({ name: `macro: ${echo}`, path: '/macro/series/{n}/visual?case={case}', echo });
    CASES.push({ name: `documents: ${echo}`, path: '/documents/Search/getFile/?case={case}&key={n}', echo });
    continue;
  }
  if (echo.startsWith('XML')) {
    CASES.push({ name: `macro: ${echo}`, path: '/macro/series/{n}?case={case}&format=xml', echo });
    CASES.push({
      name: `documents: ${echo}`,
      path: '/documents/Search/query/?case={case}&keyword=k{n}&format=xml',
      echo,
    });
    continue;
  }
  // Our static keys (macro) and the EMIS session (documents) everywhere; the other two keys where the
  // vendor's answers differ most (bodies and errors).
  CASES.push({ name: `macro: ${echo}`, path: INTERFACE_PATHS.macro, echo });
  CASES.push({ name: `documents: ${echo}`, path: INTERFACE_PATHS.documents, echo });
  if (/body|error|escaping/.test(echo)) {
    CASES.push({ name: `company: ${echo}`, path: INTERFACE_PATHS.company, echo });
    CASES.push({ name: `deals: ${echo}`, path: INTERFACE_PATHS.deals, echo });
  }
}

describe('hardening: hostile vendors echo our secrets in every form', () => {
  const app = testConsumer({ id: 'leaks-app', write: true });
  const auth = { authorization: `Bearer ${app.key}` };
  const vendor = new ScriptedUpstream(() => undefined);
  /** Session ids the hostile EMIS vendor handed out (secrets like the keys, with `/`, `+`, `=`). */
  const sessions: string[] = [];
  let loginEchoes = 0;
  let gw: GatewayHandle;
  let logStart = 0;
  const results: CaseResult[] = [];
  let found = 0;
  let keysAtVendor = 0;
  const started = Date.now();
  let n = 500_000 + Math.floor(Math.random() * 100_000);

  /** What each case's answers were (status, type, size): the report shows the scans had something to scan. */
  const seen: string[] = [];
  const secrets = new Map<string, SecretForm[]>();
  const learn = (name: string, value: string) => {
    secrets.set(name, secretForms(value));
    recordSecret(value);
  };
  learn('macro key', KEYS.macro);
  learn('company key', KEYS.company);
  learn('deals key', KEYS.deals);
  learn('EMIS password', EMIS_PASSWORD);

  vendor.script = (c) => {
    const path = c.recorded.path;
    if (path.endsWith('/Auth/login/')) {
      const body = new URLSearchParams(c.recorded.body.toString());
      // The first login is refused with the password quoted back (a hostile error message); later ones work.
      if (loginEchoes === 0) {
        loginEchoes++;
        sendJson(c.res, 200, {
          errors: [
            {
              code: 2001,
              detail: `Invalid password ${body.get('password')} (${enc(body.get('password') ?? '')})`,
            },
          ],
        });
        return;
      }
      const sid = awkwardKey('Sx');
      sessions.push(sid);
      learn(`session ${sessions.length}`, sid);
      sendJson(c.res, 200, { data: { sessionId: sid } });
      return;
    }
    if (path.endsWith('/Auth/logout/')) return sendJson(c.res, 200, { data: { loggedOut: true } });
    const credential = c.recorded.query.get('token') ?? c.recorded.query.get('sessionId') ?? '';
    const echo = ECHOES[c.recorded.query.get('case') ?? ''];
    if (!echo) return sendJson(c.res, 200, { data: { plain: true } });
    echo(credential, c);
  };

  function logFile(): string | undefined {
    const dir = captureDir();
    return dir ? join(dir, `inproc-w${process.env.JEST_WORKER_ID ?? '0'}-${process.pid}.log`) : undefined;
  }

  let foundEscaped = 0;
  function scan(where: string, text: string, failures: string[]): void {
    for (const f of findSecrets(text, secrets)) {
      found++;
      failures.push(`${where}: ${f.secret} (${f.form})`);
    }
    for (const f of findDecoded(text, secrets)) {
      foundEscaped++;
      failures.push(`${where}: ${f.secret} (${f.form})`);
    }
  }

  const scanAnswer = (where: string, a: Answer, failures: string[]) => {
    scan(
      `${where} headers`,
      Object.entries(a.headers)
        .map(([k, v]) => `${k}: ${v}`)
        .join('\n'),
      failures,
    );
    scan(`${where} body`, a.body.toString('latin1'), failures);
  };

  beforeAll(async () => {
    await vendor.start();
    const env: Record<string, string> = {
      LOG_LEVEL: 'info',
      ATRIUM_OPERATOR_TOKEN: OPERATOR_TOKEN,
      UPSTREAM_MACRO_BASE_URL: `${vendor.origin}/v2`,
      UPSTREAM_MACRO_TOKEN: KEYS.macro,
      UPSTREAM_COMPANY_BASE_URL: `${vendor.origin}/company`,
      UPSTREAM_COMPANY_TOKEN: KEYS.company,
      UPSTREAM_DOCUMENTS_BASE_URL: `${vendor.origin}/news`,
      UPSTREAM_DOCUMENTS_USERNAME: EMIS_USER,
      UPSTREAM_DOCUMENTS_PASSWORD: EMIS_PASSWORD,
      UPSTREAM_DOCUMENTS_LOGIN_BACKOFF_MS: '10',
      UPSTREAM_DEALS_BASE_URL: `${vendor.origin}/dw`,
      UPSTREAM_DEALS_TOKEN: KEYS.deals,
    };
    for (const u of ['MACRO', 'COMPANY', 'DOCUMENTS', 'DEALS']) {
      env[`UPSTREAM_${u}_RETRY_ATTEMPTS`] = '1';
      env[`UPSTREAM_${u}_BREAKER_MIN_SAMPLE`] = '10000';
    }
    const log = logFile();
    logStart = log && existsSync(log) ? statSync(log).size : 0;
    gw = await startGateway({ env, consumers: [app.consumer] });
    // The first EMIS login is the hostile refusal; once its back-off (10 ms) is over, the next one goes through.
    await call(`${gw.url}/documents/Dictionary/getTopics/`, { headers: auth });
    await eventually(
      async () => {
        const ready = JSON.parse((await call(`${gw.url}/health/ready`)).text) as {
          upstreams: Array<{ name: string; session?: { state?: string } }>;
        };
        return ready.upstreams.find((u) => u.name === 'documents')?.session?.state !== 'backoff';
      },
      { what: 'the documents login back-off is over' },
    );
  });

  afterAll(async () => {
    await gw?.close();
    await vendor.close();
    writeSuiteResults({
      suite: 'leaks',
      finishedAt: new Date().toISOString(),
      durationMs: Date.now() - started,
      counters: {
        secretsFound: found,
        secretsFoundInAnyEscaping: foundEscaped,
        gatewayKeysAtVendor: keysAtVendor,
      },
      cases: results,
      notes: [
        `${secrets.size} secrets × every form; ${sessions.length} EMIS sessions issued; ${vendor.requests.length} vendor calls`,
        ...seen,
      ],
    });
  });

  it.each(CASES.map((c) => [c.name, c] as const))('%s', async (_name, c) => {
    const failures: string[] = [];
    const path = c.path.replace('{case}', encodeURIComponent(c.echo)).replace('{n}', String(++n));
    // Twice: the miss, then whatever the gateway kept (a cached answer must be as clean as the first).
    const before = vendor.calls();
    for (const round of ['first answer', 'repeat']) {
      const a = await call(gw.url + path, { headers: auth });
      seen.push(`${c.name}: ${round} ${a.status} ${a.headers['content-type'] ?? ''} ${a.body.length} B`);
      scanAnswer(round, a, failures);
    }
    // The hostile vendor was asked (else the scan proves nothing).
    if (vendor.calls() === before) failures.push('the vendor was never called');
    results.push({ name: c.name, survived: failures.length === 0, failures });
    expect(failures).toEqual([]);
  });

  it('a batch of every case: the item answers are clean too', async () => {
    const failures: string[] = [];
    const requests = CASES.filter((c) => !c.path.includes('visual') && !c.path.includes('getFile')).map(
      (c) => ({
        path: c.path.replace('{case}', encodeURIComponent(c.echo)).replace('{n}', String(++n)),
      }),
    );
    for (let i = 0; i < requests.length; i += 20) {
      const a = await call(`${gw.url}/batch`, {
        method: 'POST',
        headers: { ...auth, 'content-type': 'application/json' },
        body: JSON.stringify({ requests: requests.slice(i, i + 20) }),
      });
      if (a.status !== 200) failures.push(`batch answered ${a.status}`);
      scanAnswer('batch answer', a, failures);
    }
    results.push({ name: 'batch of every case', survived: failures.length === 0, failures });
    expect(failures).toEqual([]);
  });

  it("the gateway's own pages: /metrics, /docs/json, /health/ready, the console and its state", async () => {
    const failures: string[] = [];
    for (const [path, headers] of [
      ['/metrics', {}],
      ['/docs/json', {}],
      ['/health/ready', {}],
      ['/console', {}],
      ['/console/api/state', { authorization: `Bearer ${OPERATOR_TOKEN}` }],
    ] as const) {
      const a = await call(gw.url + path, { headers });
      if (a.status !== 200) failures.push(`${path} answered ${a.status}`);
      scanAnswer(path, a, failures);
    }
    results.push({ name: "gateway's own pages", survived: failures.length === 0, failures });
    expect(failures).toEqual([]);
  });

  it('gateway keys in any field: refused with 400 naming the field, never sent to a vendor', async () => {
    const failures: string[] = [];
    const other = testConsumer({ id: 'leaks-other' }).key;
    const shapes = [app.key, other, `atr_op_${randomBytes(18).toString('base64url')}`, OPERATOR_TOKEN];
    const nested = (path: string[], value: string): unknown =>
      path.reduceRight<unknown>((inner, name) => ({ [name]: inner }), value);
    const tries: { what: string; field: string; path: string; init: Parameters<typeof call>[1] }[] = [];
    for (const [i, key] of shapes.entries()) {
      for (const name of ['access_token', 'Authorization', 'x-api-key', 'api_key', 'username', 'q'])
        tries.push({
          what: `query ${name}`,
          field: name,
          path: `/macro/series/${++n}?${name}=${encodeURIComponent(key)}`,
          init: { headers: auth },
        });
      tries.push({
        what: 'a header',
        field: 'x-forwarded-user',
        path: `/macro/series/${++n}`,
        init: { headers: { ...auth, 'x-forwarded-user': key } },
      });
      const depth = ['a', 'b', 'c', 'd', 'e'].slice(0, 1 + i);
      tries.push({
        what: `JSON body at depth ${depth.length}`,
        field: `body.${depth.join('.')}`,
        path: '/macro/userdefined/series',
        init: {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/json' },
          body: JSON.stringify(nested(depth, key)),
        },
      });
      tries.push({
        what: 'form body',
        field: 'body.password',
        path: '/macro/userdefined/series',
        init: {
          method: 'POST',
          headers: { ...auth, 'content-type': 'application/x-www-form-urlencoded' },
          body: `name=x&password=${encodeURIComponent(key)}`,
        },
      });
    }
    const before = vendor.calls();
    for (const t of tries) {
      const a = await call(gw.url + t.path, t.init);
      let parameter: unknown;
      try {
        parameter = (JSON.parse(a.text) as { error?: { parameter?: unknown } }).error?.parameter;
      } catch {
        parameter = undefined;
      }
      if (a.status !== 400) failures.push(`${t.what}: answered ${a.status}`);
      else if (parameter !== t.field) failures.push(`${t.what}: parameter ${String(parameter)}`);
      for (const k of shapes) if (a.text.includes(k)) failures.push(`${t.what}: the value was echoed`);
    }
    if (vendor.calls() !== before)
      failures.push(`${vendor.calls() - before} vendor calls for refused requests`);
    results.push({ name: 'gateway keys in any field', survived: failures.length === 0, failures });
    expect(failures).toEqual([]);
  });

  it('no vendor call of the whole suite carried a gateway key in any field', () => {
    const failures: string[] = [];
    for (const r of vendor.requests) {
      const hay = `${r.url}\n${JSON.stringify(r.headers)}\n${r.body.toString('latin1')}`;
      if (/atr_[A-Za-z0-9_-]{20,}/.test(hay) || hay.includes(OPERATOR_TOKEN)) {
        keysAtVendor++;
        failures.push(`${r.method} ${r.url.slice(0, 120)}`);
      }
    }
    if (vendor.requests.length === 0) failures.push('no vendor call to look at');
    results.push({ name: 'gateway keys at the vendor', survived: failures.length === 0, failures });
    expect(failures).toEqual([]);
  });

  it('every log line the gateway wrote during these calls', () => {
    const failures: string[] = [];
    const log = logFile();
    // The capture is on in every tier; without it there is nothing to scan, and that is a failure here.
    if (!log || !existsSync(log)) failures.push('no log capture to scan (ATRIUM_LOG_CAPTURE_DIR unset?)');
    else {
      const lines = readFileSync(log).subarray(logStart).toString('utf8').split('\n');
      if (lines.filter((l) => l.includes('"msg":"request"')).length < CASES.length)
        failures.push(`only ${lines.length} log lines captured`);
      lines.forEach((line, i) => scan(`log line ${i + 1}`, line, failures));
    }
    if (loginEchoes === 0) failures.push('the hostile login refusal never ran');
    results.push({ name: 'log lines', survived: failures.length === 0, failures: failures.slice(0, 30) });
    expect(failures).toEqual([]);
  });
});
