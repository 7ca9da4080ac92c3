import { existsSync, readFileSync, statSync } from 'node:fs';
import { settled } from '../../helpers/answer.js';
import { Redis } from 'ioredis';
import { ConfigError, loadConfig } from '../../../src/config/atrium-config.js';
import { GatewayError } from '../../../src/core/errors/gateway-error.js';
import { SecretMatcher, secretForms } from '../../../src/core/logging/secret-forms.js';
import { SecretRedactor } from '../../../src/core/logging/secret-redactor.js';
import { LinkRewriter } from '../../../src/proxy/links/link-rewriter.js';
import { LinkSigner } from '../../../src/proxy/links/link-signer.js';
import type { ProxyRequest, ProxyResponse } from '../../../src/proxy/pipeline.types.js';
import { keyEchoStage } from '../../../src/proxy/stages/key-echo.stage.js';
import { testConsumer } from '../../helpers/consumers.js';
import { http, startGateway, type GatewayHandle, type HttpResult } from '../../helpers/gateway.js';
import { describeRedis } from '../../helpers/redis.js';
import { inProcessCaptureFile } from '../../observability/log-capture.js';
import {
  echoForms,
  findForms,
  KeyEchoVendor,
  slashyKey,
  streamedThroughKeyEcho,
  type UpstreamName,
  type VendorReply,
  type VendorRequest,
  vendorEnv,
} from '../../helpers/key-echo-vendor.js';
import { UPSTREAMS } from '../../../src/upstreams/index.js';

/** Every form of the credential, each as a raw JSON field (`\/` and `\u002f` stay escaped in the bytes). */
function echoFields(credential: string): string {
  return Object.entries(echoForms(credential))
    .map(([k, v]) => `"${k}":"${v}"`)
    .join(',');
}

const json = (body: string, status = 200): VendorReply => ({ status, body });

/** What the consumer could read: the raw text and, for JSON, every string value decoded. */
function readable(res: HttpResult): string {
  let decoded = '';
  try {
    decoded = JSON.stringify(res.json());
  } catch {
    // not JSON
  }
  return `${Object.entries(res.headers)
    .map(([k, v]) => `${k}: ${v}`)
    .join('\n')}\n${res.text}\n${decoded}`;
}

/** Gateway route → the vendor's JSON answer carrying every form of the credential it received. */
const ECHO_ROUTES: Record<UpstreamName, string> = {
  macro: '/macro/feeds',
  company: '/company/dictionary/currencies',
  documents: '/documents/Dictionary/getTopics/',
  deals: '/deals/SearchDeal/getDeals/',
};

/** Gateway routes whose answers carry a download link to the vendor's own API, with our credential in it. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- tests read arbitrary bodies
const LINK_ROUTES: Record<UpstreamName, { route: string; field: (body: any) => string }> = {
  macro: { route: '/macro/insights/I1/download/pdf', field: (b) => b.data.downloadLink },
  company: { route: '/company/companies/dumps/D1', field: (b) => b.data.downloadLink },
  documents: {
    route: '/documents/Search/getDocuments/?ids[0]=D1',
    field: (b) => b.data.items[0].files[0].link,
  },
  deals: { route: '/deals/DealInfo/getDealInfo/?dealId=DL1', field: (b) => b.data.reportLink },
};

/**
 * The hostile vendor of these tests: echoes on the echo routes, vendor-shaped errors quoting the request,
 * download links with the credential (URL-encoded, JSON-escaped the PHP way), and the downloads themselves.
 */
function hostileScript(req: VendorRequest, vendor: KeyEchoVendor): VendorReply {
  const c = req.credential;
  const f = echoForms(c);
  const base = vendor.baseUrl(req.upstream);
  const php = (url: string) => url.replace(/\//g, '\\/');
  const credName = req.upstream === 'documents' || req.upstream === 'deals' ? 'sessionId' : 'token';
  if (req.query.get('fail') === 'quote') {
    const quoted = `GET ${req.url} (${credName}=${f.urlLower}; auth ${f.basicHeader}; ${f.phpJson})`;
    if (req.upstream === 'macro')
      return json(JSON.stringify({ errors: { status: 400, code: f.base64url, message: quoted } }), 400);
    if (req.upstream === 'company') return json(JSON.stringify({ code: f.urlUpper, message: quoted }), 500);
    // EMIS: a bad-call error on HTTP 200 (no auth-like words: those would make the gateway log in again).
    const detail = `Invalid call ${req.path} (${f.urlLower}; ${f.basicHeader}; ${f.phpJson}; ${f.base64})`;
    return json(JSON.stringify({ errors: [{ code: 3001, detail }] }));
  }
  if (req.query.get('fail') === 'long') {
    // The credential right at the length bound of vendor text in messages.
    return json(JSON.stringify({ errors: { status: 400, code: 'BAD', message: 'x'.repeat(290) + c } }), 400);
  }
  if (req.query.get('key') === 'ECHO' || req.path === '/series/310901/visual')
    // A file route answering text that quotes the credential (a small one arrives whole, a big one streams).
    return {
      headers: { 'content-type': req.upstream === 'macro' ? 'text/plain' : 'application/json' },
      body: `{"pad":"${'.'.repeat(Number(req.query.get('pad') ?? 0))}","quote":"${Object.values(f).join(' ')} end"}`,
    };
  switch (req.path) {
    case '/feeds':
    case '/dictionary/currencies':
    case '/Dictionary/getTopics/':
    case '/SearchDeal/getDeals/':
      // The macro vendor reads format=xml and Accept: application/xml alike (spec §4.1); the gateway sends the header.
      if (req.query.get('format') === 'xml' || req.accept.includes('xml'))
        return {
          headers: { 'content-type': 'application/xml' },
          body: `<response><note>${f.literal} ${f.urlUpper} ${f.base64}</note><link>${base}/x/y.csv?a=1&amp;${credName}=${f.urlLower}</link></response>`,
        };
      return json(`{"data":[{"id":"A1",${echoFields(c)}}],"note":"request carried ${credName}=${f.form}"}`);
    case '/insights/I1/download/pdf':
      return json(
        `{"data":{"downloadLink":"${php(`${base}/downloads/insight-I1.pdf?expires=1999999999&token=${f.urlUpper}`)}","mirror":"${php(`https://cdn.example.com/insight-I1.pdf?token=${f.urlUpper}`)}","downloadLinkExpiration":"2033-05-18T03:33:19"}}`,
      );
    case '/companies/dumps/D1':
      return json(
        `{"data":{"id":"D1","status":"DONE","downloadLink":"${base}/companies/dumps/D1/file?token=${c}&part=1"}}`,
      );
    case '/Search/getDocuments/':
      return json(
        `{"data":{"items":[{"id":"D1","files":[{"key":"F1","link":"${php(`${base}/Search/getFile/?key=F1&sessionId=${f.urlLower}`)}"}]}]}}`,
      );
    case '/DealInfo/getDealInfo/':
      return json(
        `{"data":{"id":"DL1","reportLink":"${base}/DealInfo/getReport/?dealId=DL1&sessionId=${f.form}"}}`,
      );
    // The targets of the links: the file itself.
    case '/downloads/insight-I1.pdf':
    case '/companies/dumps/D1/file':
    case '/Search/getFile/':
    case '/DealInfo/getReport/':
      return {
        headers: {
          'content-type': 'application/pdf',
          'content-disposition': 'attachment; filename="report.pdf"',
        },
        body: `FILE ${req.upstream}${req.path}`,
      };
    default:
      return json('{"data":[]}');
  }
}

describe('no vendor key in an encoded form', () => {
  describe('the forms of a secret (built once per secret)', () => {
    const key = 'ab/cd+ef==gh12345';

    it('covers every form a vendor echoes, written out independently of the product', () => {
      const matcher = new SecretMatcher([key]);
      for (const [name, form] of Object.entries(echoForms(key))) {
        const { text, count } = matcher.scrubText(`before ${form} after`);
        expect({ name, count }).toEqual({ name, count: 1 });
        expect(findForms(text, [key])).toEqual([]);
      }
      expect(secretForms(key)).toEqual(
        expect.arrayContaining([
          'ab%2Fcd%2Bef%3D%3Dgh12345',
          'ab%2fcd%2bef%3d%3dgh12345',
          'ab\\/cd+ef==gh12345',
        ]),
      );
    });

    it('leaves a body without any form as the same Buffer (not copied)', () => {
      const matcher = new SecretMatcher([key]);
      const body = Buffer.from('{"data":[{"id":"ab","note":"cd+ef"}]}');
      expect(matcher.scrubBuffer(body).body).toBe(body);
      expect(matcher.inBuffer(body)).toBe(false);
    });

    it('the redactor builds forms at registration and forgets them with the secret (session renewal)', () => {
      const redactor = new SecretRedactor();
      redactor.register(key);
      expect(redactor.redact(`x ${encodeURIComponent(key)} y`)).toBe('x [REDACTED] y');
      expect(redactor.redact(Buffer.from(key).toString('base64'))).toBe('[REDACTED]');
      redactor.unregister(key);
      expect(redactor.redact(encodeURIComponent(key))).toBe(encodeURIComponent(key));
    });

    it('scrubs a streamed body whatever the chunk boundaries, keeping its length', async () => {
      const text = `head ${encodeURIComponent(key)} mid ${key} tail`;
      for (let cut = 1; cut < text.length; cut++) {
        const out = await streamedThroughKeyEcho(key, text, cut);
        expect({ cut, found: findForms(out, [key]) }).toEqual({ cut, found: [] });
        expect(out).toHaveLength(text.length);
        expect(out.startsWith('head ') && out.endsWith(' tail')).toBe(true);
      }
    });

    it('scrubs error messages and vendor codes in every form', async () => {
      const redactor = new SecretRedactor();
      redactor.register(key);
      const stage = keyEchoStage({ secrets: () => [key], redact: (t) => redactor.redact(t) });
      const f = echoForms(key);
      const h = stage(async (): Promise<ProxyResponse> => {
        throw new GatewayError('UPSTREAM_BAD_REQUEST', {
          message: `bad ${f.urlLower} ${f.phpJson}`,
          upstreamCode: f.base64,
        });
      });
      const err = (await settled(h, {} as ProxyRequest).catch((e: unknown) => e)) as GatewayError;
      expect(err).toBeInstanceOf(GatewayError);
      expect(err.message).toBe('bad [REDACTED] [REDACTED]');
      expect(err.upstreamCode).toBe('[REDACTED]');
    });
  });

  describe('gateway-signed download links', () => {
    const secret = 'link-signing-secret-for-the-tests-0123456789';

    it('verifies what it signed, refuses an altered, re-targeted or expired link', () => {
      let now = 1_700_000_000_000;
      const signer = new LinkSigner({ secret, ttlSeconds: 600, now: () => now });
      const link = signer.sign('macro', '/downloads/a.zip?expires=1');
      expect(link).toMatch(/^\/links\/macro\/a\.zip\?t=/);
      const t = new URL(link, 'http://gw').searchParams.get('t')!;
      expect(signer.verify('macro', t)).toEqual({ upstream: 'macro', target: '/downloads/a.zip?expires=1' });
      const forged = Buffer.from('/downloads/b.zip').toString('base64url') + t.slice(t.indexOf('.'));
      expect(() => signer.verify('macro', forged)).toThrow(GatewayError);
      expect(() => signer.verify('company', t)).toThrow('not valid');
      expect(() =>
        new LinkSigner({ secret: secret + 'x', ttlSeconds: 600, now: () => now }).verify('macro', t),
      ).toThrow('not valid');
      now += 601_000;
      expect(() => signer.verify('macro', t)).toThrow('expired');
    });

    it('re-signs only links to the upstream base URL, in JSON however escaped, never one with the key in its path', () => {
      const key = 'ab/cd+ef==gh12345';
      const matcher = new SecretMatcher([key]);
      const signer = new LinkSigner({ secret, ttlSeconds: 600 });
      const rewriter = new LinkRewriter({ upstream: 'macro', baseUrl: 'https://api.vendor.test/v2', signer });
      const f = echoForms(key);
      const body = Buffer.from(
        JSON.stringify({
          go: 'X',
          php: 'Y',
          outside: `https://api.vendor.test/v3/f.zip?token=${f.urlUpper}`,
          inPath: `https://api.vendor.test/v2/${f.urlUpper}/f.zip`,
          clean: 'https://api.vendor.test/v2/f.zip?expires=1',
        })
          // Go writes & as \u0026; PHP writes / as \/.
          .replace('"X"', `"https:\\/\\/api.vendor.test\\/v2\\/a.zip?x=1\\u0026token=${f.urlLower}"`)
          .replace(
            '"Y"',
            `"${`https://api.vendor.test/v2/dl/b.csv?token=${f.literal}&y=2`.replace(/\//g, '\\/')}"`,
          ),
      );
      expect(body.toString()).toContain('\\/v2\\/a.zip?x=1\\u0026token=');
      const out = rewriter.rewrite(body, 'application/json', matcher);
      expect(out.count).toBe(2);
      const parsed = JSON.parse(out.body.toString());
      expect(parsed.go).toMatch(/^\/links\/macro\/a\.zip\?t=/);
      expect(parsed.php).toMatch(/^\/links\/macro\/b\.csv\?t=/);
      const target = (link: string) =>
        signer.verify('macro', new URL(link, 'http://gw').searchParams.get('t')).target;
      expect(target(parsed.go)).toBe('/a.zip?x=1');
      expect(target(parsed.php)).toBe('/dl/b.csv?y=2');
      // Not ours to re-sign: left for the scrubber, which masks the key in them.
      expect(parsed.outside).toContain(f.urlUpper);
      expect(parsed.inPath).toContain(f.urlUpper);
      expect(parsed.clean).toBe('https://api.vendor.test/v2/f.zip?expires=1');
      expect(findForms(matcher.scrubBuffer(out.body).body.toString(), [key])).toEqual([]);
    });

    it('ATRIUM_LINK_SECRET is validated, and random per process when unset', () => {
      const env = {
        UPSTREAM_MACRO_BASE_URL: 'http://127.0.0.1:9',
        UPSTREAM_MACRO_TOKEN: 'unused-test-token',
      };
      const base = {
        ...env,
        UPSTREAM_COMPANY_BASE_URL: 'http://127.0.0.1:9',
        UPSTREAM_COMPANY_TOKEN: 'unused-test-token',
        UPSTREAM_DOCUMENTS_BASE_URL: 'http://127.0.0.1:9',
        UPSTREAM_DOCUMENTS_TOKEN: 'unused-test-token',
        UPSTREAM_DEALS_BASE_URL: 'http://127.0.0.1:9',
        UPSTREAM_DEALS_TOKEN: 'unused-test-token',
      };
      expect(() => loadConfig({ ...base, ATRIUM_LINK_SECRET: 'short' }, UPSTREAMS)).toThrow(ConfigError);
      expect(() => loadConfig({ ...base, ATRIUM_LINK_SECRET: 'short' }, UPSTREAMS)).toThrow(
        /ATRIUM_LINK_SECRET/,
      );
      const a = loadConfig(base, UPSTREAMS).links;
      const b = loadConfig(base, UPSTREAMS).links;
      expect(a.secretSource).toBe('random');
      expect(a.secret).not.toBe(b.secret);
      expect(a.secret.length).toBeGreaterThanOrEqual(32);
      const set = loadConfig(
        {
          ...base,
          ATRIUM_LINK_SECRET: secret,
          ATRIUM_PUBLIC_URL: 'https://atrium.example/',
        },
        UPSTREAMS,
      );
      expect(set.links).toMatchObject({
        secret,
        secretSource: 'configured',
        publicUrl: 'https://atrium.example',
      });
    });
  });

  describe('end to end, keys and session ids with /, + and =', () => {
    const consumer = testConsumer({ id: 'reader' });
    const keys = {
      macro: slashyKey('mk'),
      company: slashyKey('ck'),
      documentsPassword: slashyKey('dp'),
      dealsPassword: slashyKey('wp'),
    };
    const vendor = new KeyEchoVendor({ documents: keys.documentsPassword, deals: keys.dealsPassword });
    let gw: GatewayHandle;
    const logFile = inProcessCaptureFile();
    let logStart = 0;
    const secrets = (): string[] => [
      keys.macro,
      keys.company,
      keys.documentsPassword,
      keys.dealsPassword,
      ...vendor.issuedSessions,
    ];
    const current = (u: UpstreamName): string =>
      u === 'macro' ? keys.macro : u === 'company' ? keys.company : vendor.sessions[u].at(-1)!;

    beforeAll(async () => {
      logStart = logFile && existsSync(logFile) ? statSync(logFile).size : 0;
      await vendor.start();
      vendor.script = hostileScript;
      gw = await startGateway({
        env: { ...vendorEnv(vendor, keys), UPSTREAM_COMPANY_RETRY_ATTEMPTS: '1' },
        consumers: [consumer.consumer],
      });
    });
    afterAll(async () => {
      await gw?.close();
      await vendor.close();
    });

    const get = (path: string, headers: Record<string, string> = {}) =>
      http(gw.url + path, { headers: { authorization: `Bearer ${consumer.key}`, ...headers } });
    const upstreams: UpstreamName[] = ['macro', 'company', 'documents', 'deals'];

    it.each(upstreams)('%s: a 200 body echoing every form is scrubbed, fetched and cached', async (u) => {
      const fetched = await get(ECHO_ROUTES[u]);
      expect(fetched.status).toBe(200);
      // The vendor really echoed what the gateway sent it.
      expect(vendor.requests.at(-1)!.credential).toBe(current(u));
      expect(findForms(readable(fetched), secrets())).toEqual([]);
      const data = fetched.json().data[0];
      for (const name of Object.keys(echoForms('x'))) expect(data[name]).toContain('[REDACTED]');
      const cached = await get(ECHO_ROUTES[u]);
      expect(cached.headers['x-cache']).toBe('HIT');
      expect(findForms(readable(cached), secrets())).toEqual([]);
    });

    it('an XML body is scrubbed, and its escaped link (&amp;) becomes a signed link', async () => {
      const res = await get(`${ECHO_ROUTES.macro}?format=xml`);
      expect(res.status).toBe(200);
      expect(res.headers['content-type']).toContain('xml');
      expect(findForms(readable(res), secrets())).toEqual([]);
      expect(res.text).toMatch(/<link>\/links\/macro\/y\.csv\?t=[A-Za-z0-9_.-]+<\/link>/);
    });

    it.each(upstreams)('%s: an error quoting the request keeps no form in the envelope', async (u) => {
      const sep = ECHO_ROUTES[u].includes('?') ? '&' : '?';
      const res = await get(`${ECHO_ROUTES[u]}${sep}fail=quote`);
      expect(res.status).toBeGreaterThanOrEqual(400);
      expect(vendor.requests.at(-1)!.credential).toBe(current(u));
      expect(res.json().error.message).toContain('[REDACTED]');
      expect(findForms(readable(res), secrets())).toEqual([]);
    });

    it.each([
      ['documents, arriving whole', '/documents/Search/getFile/?key=ECHO'],
      ['macro, streamed', '/macro/series/310901/visual'],
      ['documents, streamed past the peek', '/documents/Search/getFile/?key=ECHO&pad=200000'],
    ])('a file answer quoting the credential is scrubbed (%s), its length true', async (_what, path) => {
      const res = await get(path);
      expect(res.status).toBe(200);
      expect(res.json().quote.endsWith(' end')).toBe(true);
      if (res.headers['content-length'] !== undefined)
        expect(Number(res.headers['content-length'])).toBe(Buffer.byteLength(res.text));
      expect(findForms(readable(res), secrets())).toEqual([]);
    });

    it('a secret at the length bound of a vendor message is scrubbed before it is cut', async () => {
      const res = await get(`${ECHO_ROUTES.macro}?fail=long`);
      expect(res.status).toBe(400);
      expect(res.text).not.toContain(keys.macro.slice(0, 6));
      expect(findForms(readable(res), secrets())).toEqual([]);
    });

    it.each(upstreams)(
      '%s: a download link carrying the credential becomes a working gateway-signed link',
      async (u) => {
        const res = await get(LINK_ROUTES[u].route);
        expect(res.status).toBe(200);
        expect(findForms(readable(res), secrets())).toEqual([]);
        const link = LINK_ROUTES[u].field(res.json());
        expect(link).toMatch(
          new RegExp(`^/links/${u}/[A-Za-z0-9._-]+\\?t=[A-Za-z0-9_-]+\\.\\d+\\.[A-Za-z0-9_-]{43}$`),
        );

        // Followed without any key: the vendor's file, fetched with our current credential injected.
        const before = vendor.requests.length;
        const file = await http(gw.url + link);
        expect(file.status).toBe(200);
        expect(file.text).toMatch(/^FILE /);
        expect(file.headers['content-disposition']).toBe('attachment; filename="report.pdf"');
        const seen = vendor.requests.slice(before);
        expect(seen).toHaveLength(1);
        expect(seen[0].credential).toBe(current(u));
        const credName = u === 'documents' || u === 'deals' ? 'sessionId' : 'token';
        expect(seen[0].query.getAll(credName)).toEqual([current(u)]);
        // The rest of the vendor's query is kept as it was.
        const kept = [...seen[0].query.keys()].filter((k) => k !== credName);
        expect(kept.length).toBeGreaterThan(0);
        expect(findForms(readable(file), secrets())).toEqual([]);
      },
    );

    it('a link to another host cannot be signed: the credential in it is masked', async () => {
      const res = await get(LINK_ROUTES.macro.route);
      expect(res.json().data.mirror).toBe('https://cdn.example.com/insight-I1.pdf?token=[REDACTED]');
    });

    it('an altered or absent signature is refused with the envelope, and nothing reaches the vendor', async () => {
      const res = await get(LINK_ROUTES.company.route);
      const link: string = LINK_ROUTES.company.field(res.json());
      const before = vendor.requests.length;
      const tampered = link.replace(/\?t=(.)/, (_m, c: string) => `?t=${c === 'A' ? 'B' : 'A'}`);
      for (const bad of [
        tampered,
        link.replace('/links/company/', '/links/macro/'),
        link.replace(/\?t=.*/, ''),
      ]) {
        const r = await http(gw.url + bad);
        expect(r.status).toBe(403);
        expect(r.json().error.code).toBe('FORBIDDEN');
        expect(r.headers['x-request-id']).toBeDefined();
      }
      expect(vendor.requests.length).toBe(before);
    });

    it('a renewed session id is scrubbed in every form from its first answer on', async () => {
      const first = current('documents');
      const next = slashyKey('renewed');
      vendor.nextSessionIds.push(next);
      const rejected = new Set<string>();
      vendor.script = (req, v) => {
        if (req.upstream === 'documents' && req.credential === first && !rejected.has(first)) {
          rejected.add(first);
          return json('{"errors":[{"code":2001,"detail":"Session expired"}]}');
        }
        return hostileScript(req, v);
      };
      try {
        const res = await get(`${ECHO_ROUTES.documents}?after=renewal`);
        expect(res.status).toBe(200);
        expect(vendor.sessions.documents.at(-1)).toBe(next);
        expect(vendor.requests.at(-1)!.credential).toBe(next);
        expect(res.text).toContain('[REDACTED]');
        expect(findForms(readable(res), secrets())).toEqual([]);
      } finally {
        vendor.script = hostileScript;
      }
    });

    it('no form reaches a log line (warn lines of vendor errors included) or /metrics', async () => {
      // A vendor 5xx is logged at warn with its message.
      const res = await get(`${ECHO_ROUTES.company}?fail=quote`);
      expect(res.status).toBe(502);
      expect(logFile).toBeDefined();
      const logs = readFileSync(logFile!).subarray(logStart).toString();
      const warns = logs
        .split('\n')
        .filter((l) => l.includes('"level":"warn"') && l.includes('UPSTREAM_ERROR'));
      expect(warns.length).toBeGreaterThan(0);
      expect(warns.join('\n')).toContain('[REDACTED]');
      expect(findForms(logs, secrets())).toEqual([]);
      // No ATRIUM_LINK_SECRET here: the boot says a fleet needs one.
      expect(logs).toContain('ATRIUM_LINK_SECRET is not set');

      const metrics = await http(`${gw.url}/metrics`);
      expect(metrics.status).toBe(200);
      expect(findForms(metrics.text, secrets())).toEqual([]);
      expect(metrics.text).toMatch(/atrium_key_echo_scrubs_total\{upstream="macro"\} [1-9]/);
    });
  });

  describeRedis('in the shared cache (Redis), with a public gateway URL', (ctx) => {
    const consumer = testConsumer({ id: 'reader' });
    const keys = {
      macro: slashyKey('mk'),
      company: slashyKey('ck'),
      documentsPassword: slashyKey('dp'),
      dealsPassword: slashyKey('wp'),
    };
    const vendor = new KeyEchoVendor({ documents: keys.documentsPassword, deals: keys.dealsPassword });
    let gw: GatewayHandle;
    let redis: Redis;

    beforeAll(async () => {
      await vendor.start();
      vendor.script = hostileScript;
      gw = await startGateway({
        env: {
          ...vendorEnv(vendor, keys),
          REDIS_URL: ctx.url,
          ATRIUM_REDIS_PREFIX: ctx.prefix,
          ATRIUM_PUBLIC_URL: 'https://atrium.example.test',
          ATRIUM_LINK_SECRET: 'fleet-wide-link-secret-0123456789abcdef',
        },
        consumers: [consumer.consumer],
      });
      redis = new Redis(ctx.url, { lazyConnect: true });
      await redis.connect();
    });
    afterAll(async () => {
      await gw?.close();
      await vendor.close();
      if (redis) {
        const keysLeft = await redis.keys(`${ctx.prefix}*`);
        if (keysLeft.length) await redis.del(...keysLeft);
        redis.disconnect();
      }
    });

    it('neither cache keys nor cached entries hold any form; links are absolute under ATRIUM_PUBLIC_URL', async () => {
      const auth = { authorization: `Bearer ${consumer.key}` };
      for (const u of ['macro', 'company', 'documents', 'deals'] as UpstreamName[]) {
        expect((await http(gw.url + ECHO_ROUTES[u], { headers: auth })).status).toBe(200);
        const res = await http(gw.url + LINK_ROUTES[u].route, { headers: auth });
        const link = LINK_ROUTES[u].field(res.json());
        expect(link.startsWith(`https://atrium.example.test/links/${u}/`)).toBe(true);
        const file = await http(link.replace('https://atrium.example.test', gw.url));
        expect(file.status).toBe(200);
      }
      const secrets = [
        keys.macro,
        keys.company,
        keys.documentsPassword,
        keys.dealsPassword,
        ...vendor.issuedSessions,
      ];
      const stored = await redis.keys(`${ctx.prefix}*`);
      expect(stored.length).toBeGreaterThan(0);
      let values = '';
      for (const k of stored) {
        const type = await redis.type(k);
        if (type === 'string') values += (await redis.getBuffer(k))?.toString('latin1') ?? '';
        else if (type === 'hash') values += JSON.stringify(await redis.hgetall(k));
        else if (type === 'set') values += (await redis.smembers(k)).join('\n');
        else if (type === 'zset') values += (await redis.zrange(k, '0', '-1')).join('\n');
        else if (type === 'list') values += (await redis.lrange(k, 0, -1)).join('\n');
      }
      expect(values.length).toBeGreaterThan(0);
      expect(findForms(stored.join('\n'), secrets)).toEqual([]);
      expect(findForms(values, secrets)).toEqual([]);
    });
  });
});
