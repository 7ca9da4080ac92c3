import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser, Page } from 'playwright-core';
import { parseConsumer } from '../../src/core/auth/consumer-record.js';
import type { Consumer } from '../../src/core/auth/consumer.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { FakeIdentityProvider } from '../helpers/identity-provider.js';
import { describeNeeding } from '../helpers/system-parts.js';
import { withGateway } from '../helpers/gateway.js';
import { launchChromium } from '../helpers/chromium.js';

const TOKEN = 'sbx_macro_oidc_browser_secret_41d9';
const CLIENT_ID = 'dashboard-web';
const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';

/**
 * The app's page: signs its user in with the IdP (authorization code + PKCE S256, endpoints from discovery,
 * no library so the test needs no bundler), then calls Atrium with the user's token. No gateway key in it.
 * It writes what it saw as JSON into #result.
 */
function appPage(idp: string, gateway: string): string {
  const script = `
(async () => {
  const out = (v) => { document.getElementById('result').textContent = JSON.stringify(v); };
  const b64url = (bytes) => btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\\+/g, '-').replace(/\\//g, '_').replace(/=+$/, '');
  try {
    const conf = await (await fetch(${JSON.stringify(idp)} + '/.well-known/openid-configuration')).json();
    const here = location.origin + '/';
    const q = new URLSearchParams(location.search);
    if (!q.get('code')) {
      const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
      const state = b64url(crypto.getRandomValues(new Uint8Array(12)));
      sessionStorage.setItem('pkce', JSON.stringify({ verifier, state }));
      const challenge = b64url(await crypto.subtle.digest('SHA-256', new TextEncoder().encode(verifier)));
      const at = new URL(conf.authorization_endpoint);
      for (const [k, v] of Object.entries({ response_type: 'code', client_id: ${JSON.stringify(CLIENT_ID)},
        redirect_uri: here, scope: 'openid', state, code_challenge: challenge, code_challenge_method: 'S256' }))
        at.searchParams.set(k, v);
      location.assign(at.toString());
      return;
    }
    const { verifier, state } = JSON.parse(sessionStorage.getItem('pkce'));
    if (q.get('state') !== state) return out({ error: 'state mismatch' });
    const tokenRes = await fetch(conf.token_endpoint, {
      method: 'POST',
      body: new URLSearchParams({ grant_type: 'authorization_code', code: q.get('code'),
        redirect_uri: here, client_id: ${JSON.stringify(CLIENT_ID)}, code_verifier: verifier }),
    });
    const { access_token } = await tokenRes.json();
    history.replaceState(null, '', '/');
    // no-store: the browser's private cache would otherwise answer the second call of the same URL
    // itself (the gateway's answers carry Cache-Control: private, max-age), without asking the gateway.
    const call = async (path, token, extra = {}) => {
      const res = await fetch(${JSON.stringify(gateway)} + path,
        { cache: 'no-store', headers: { authorization: 'Bearer ' + token, ...extra } });
      const body = res.status === 304 ? {} : await res.json();
      return { status: res.status, requestId: res.headers.get('x-request-id'), etag: res.headers.get('etag'),
        message: body.error ? body.error.message : null };
    };
    const parts = access_token.split('.');
    const tampered = parts[0] + '.' + parts[1] + '.' + parts[2].slice(0, -4) + 'AAAA';
    const route = await call('/macro/feeds?limit=1', access_token);
    // A screen: one view, traced from the page (W3C trace context through the preflight).
    const view = await call('/views/series-overview?id=310112', access_token,
      { traceparent: '00-${TRACE_ID}-00f067aa0ba902b7-01' });
    out({
      signedIn: true,
      route,
      tampered: await call('/macro/feeds?limit=1', tampered),
      view,
      // Polling the route again: the ETag it read, answered 304 without a body.
      revalidated: await call('/macro/feeds?limit=1', access_token, { 'if-none-match': route.etag }),
    });
  } catch (e) {
    out({ error: String(e) });
  }
})();`;
  return `<!doctype html><meta charset="utf-8"><title>dashboard</title><pre id="result"></pre><script>${script}</script>`;
}

interface Answer {
  status: number;
  requestId: string | null;
  etag: string | null;
  message: string | null;
}

interface PageResult {
  signedIn?: boolean;
  error?: string;
  route?: Answer;
  tampered?: Answer;
  view?: Answer;
  revalidated?: Answer;
}

/**
 * The browser sign-in of docs/frontend.md end to end: a page on another origin signs its user in with the
 * loopback IdP in real headless Chromium and calls Atrium with the token it got (CORS preflight included).
 */
describeNeeding('chromium', 'signing in with the identity provider in headless Chromium', () => {
  const idp = new FakeIdentityProvider('ES256');
  const fake = new FakeMacroUpstream({ token: TOKEN });
  let app: Server;
  let appOrigin = '';
  let browser: Browser;

  // The page's origin exists before the gateway (its consumer lists it); the IdP is started by the fixture.
  beforeAll(async () => {
    app = createServer((req, res) => {
      if ((req.url ?? '/').split('?')[0] !== '/') return void res.writeHead(404).end();
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      res.end(appPage(idp.issuer, gw.url));
    });
    await new Promise<void>((r) => app.listen(0, '127.0.0.1', r));
    appOrigin = `http://127.0.0.1:${(app.address() as AddressInfo).port}`;
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await new Promise((r) => (app ? app.close(r) : r(undefined)));
  });
  const gw = withGateway({
    upstreams: { macro: { fake, token: TOKEN } },
    servers: [idp],
    consumers: (): Consumer[] => [
      parseConsumer(
        {
          id: CLIENT_ID,
          upstreams: ['macro'],
          corsOrigins: [appOrigin],
          oidc: { issuer: idp.issuer, audience: CLIENT_ID },
        },
        0,
        ['macro', 'company', 'documents', 'deals'],
      ),
    ],
  });

  it('the page signs in (code + PKCE), calls a route and a view with tracing, revalidates with 304, receives compressed answers, and reads a refusal', async () => {
    const page: Page = await browser.newPage();
    const errors: string[] = [];
    page.on('pageerror', (e) => errors.push(e.message));
    // What the browser itself received from the gateway (before its own decompression).
    const encodings = new Map<string, string | undefined>();
    page.on('response', (r) => {
      if (r.url().startsWith(gw.url) && r.request().method() === 'GET')
        encodings.set(new URL(r.url()).pathname, r.headers()['content-encoding']);
    });
    await page.goto(appOrigin + '/');
    await page.waitForFunction(() => document.getElementById('result')?.textContent !== '', undefined, {
      timeout: 15_000,
    });
    const result = JSON.parse((await page.locator('#result').textContent()) ?? '{}') as PageResult;
    expect(errors).toEqual([]);
    expect(result.error).toBeUndefined();
    expect(result.signedIn).toBe(true);
    expect(result.route).toMatchObject({ status: 200, message: null });
    expect(result.route?.requestId).toMatch(/.+/);
    // A tampered signature is refused, and the page can read why.
    expect(result.tampered).toMatchObject({
      status: 401,
      message: 'The bearer token is not accepted: signature invalid.',
    });
    // The view answered, its parts traced under the page's trace; the poll revalidated without a body.
    expect(result.view).toMatchObject({ status: 200, message: null });
    expect(result.revalidated).toMatchObject({ status: 304, etag: result.route?.etag });
    expect(result.route?.etag).toMatch(/^"[\w-]+"$/);
    const viewCalls = fake.requests.filter((r) => r.path.includes('/series/310112'));
    expect(viewCalls.length).toBeGreaterThanOrEqual(2);
    for (const r of viewCalls) expect(String(r.headers.traceparent)).toContain(TRACE_ID);
    // The view's answer (over 1 KiB) crossed the wire compressed; the browser asked for gzip.
    expect(encodings.get('/views/series-overview')).toMatch(/^(gzip|br)$/);
    // The sign-in happened at the IdP; the vendor saw no token. (A page's own If-None-Match makes fetch add
    // Cache-Control: no-cache, so the gateway asks the vendor again before its 304: two calls, never more.
    // The browser's own revalidation of a stale entry carries no such header and costs the vendor nothing,
    // as test/cache/conditional-get.e2e.spec.ts shows.)
    expect(idp.requested).toEqual(expect.arrayContaining(['/authorize', '/token', '/jwks']));
    expect(fake.requests.filter((r) => r.path.endsWith('/feeds'))).toHaveLength(2);
    expect(JSON.stringify(fake.requests.map((r) => r.headers))).not.toMatch(/eyJ/);
    expect(fake.requests.map((r) => r.url).join(' ')).not.toMatch(/eyJ/);
    // Nothing in the page is a gateway key.
    expect(await page.content()).not.toMatch(/atr_/);
    await page.close();
  });
});
