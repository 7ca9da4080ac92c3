import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, type HttpResult, withGateway } from '../helpers/gateway.js';

const TOKEN = 'sbx_macro_cors_secret_3b1e';
const APP = 'https://app.example';
const OTHER = 'https://other.example';

describe('CORS per consumer', () => {
  const web = testConsumer({
    id: 'web',
    upstreams: new Set(['macro']),
    corsOrigins: [APP, 'http://localhost:5173/'],
  });
  const other = testConsumer({ id: 'other', upstreams: new Set(['macro']), corsOrigins: [OTHER] });
  const server = testConsumer({ id: 'server', upstreams: new Set(['macro']) });
  const fake = new FakeMacroUpstream({ token: TOKEN });
  const gw = withGateway({
    upstreams: { macro: { fake, token: TOKEN } },
    env: { ATRIUM_CORS_MAX_AGE_SECONDS: '900' },
    consumers: [web, other, server],
  });
  const seen: HttpResult[] = [];
  afterAll(() => {
    // Never a wildcard, in any answer of this suite (credentials are allowed).
    for (const r of seen) expect(r.headers['access-control-allow-origin']).not.toBe('*');
  });

  async function call(
    path: string,
    options: { method?: 'GET' | 'OPTIONS' | 'POST'; headers?: Record<string, string> } = {},
  ): Promise<HttpResult> {
    const res = await http(gw.url + path, { method: options.method ?? 'GET', headers: options.headers });
    seen.push(res);
    return res;
  }
  const preflight = (origin: string, method = 'GET', headers = 'authorization') =>
    call('/macro/feeds?limit=1', {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': headers },
    });

  describe('preflight', () => {
    it('is answered for an origin some consumer allows: no key, no routing, no upstream call', async () => {
      const res = await preflight(APP, 'GET', 'authorization, x-api-key, accept-language');
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(APP);
      expect(res.headers['access-control-allow-credentials']).toBe('true');
      expect(res.headers['access-control-allow-methods']).toContain('GET');
      const allowed = res.headers['access-control-allow-headers'].split(/,\s*/);
      expect(allowed).toEqual(expect.arrayContaining(['authorization', 'x-api-key', 'accept-language']));
      expect(res.headers['access-control-max-age']).toBe('900');
      expect(res.headers.vary).toMatch(/Origin/);
      expect(res.text).toBe('');
      expect(fake.requests).toHaveLength(0);
    });

    it('matches origins as browsers send them (configured with a trailing slash)', async () => {
      const res = await preflight('http://localhost:5173');
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe('http://localhost:5173');
    });

    it('is refused for an origin no consumer allows, without any CORS grant', async () => {
      const res = await preflight('https://evil.example', 'DELETE');
      expect(res.status).toBe(403);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(res.json().error.code).toBe('FORBIDDEN');
      expect(fake.requests).toHaveLength(0);
    });

    it('a preflight to any path is answered the same way (it never reaches the router)', async () => {
      const res = await call('/batch', {
        method: 'OPTIONS',
        headers: { origin: OTHER, 'access-control-request-method': 'POST' },
      });
      expect(res.status).toBe(204);
      expect(res.headers['access-control-allow-origin']).toBe(OTHER);
    });
  });

  describe('actual requests', () => {
    it('allowed origin and key: the answer is readable, with the headers a front end needs exposed', async () => {
      const res = await call('/macro/feeds?limit=1', {
        headers: { origin: APP, authorization: `Bearer ${web.key}` },
      });
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe(APP);
      expect(res.headers['access-control-allow-credentials']).toBe('true');
      expect(res.headers.vary).toMatch(/\bOrigin\b/);
      const exposed = res.headers['access-control-expose-headers'].split(/,\s*/);
      expect(exposed).toEqual(
        expect.arrayContaining([
          'x-request-id',
          'x-cache',
          'age',
          'retry-after',
          'ratelimit-limit',
          'ratelimit-remaining',
          'ratelimit-reset',
        ]),
      );
      expect(fake.requests).toHaveLength(1);
    });

    it('an origin allowed for another consumer only: 403 before any upstream call, readable by the page', async () => {
      const res = await call('/macro/feeds?limit=1', {
        headers: { origin: OTHER, authorization: `Bearer ${web.key}` },
      });
      expect(res.status).toBe(403);
      expect(res.json().error).toMatchObject({ code: 'FORBIDDEN' });
      expect(res.json().error.message).toContain('"web"');
      expect(res.headers['access-control-allow-origin']).toBe(OTHER);
      expect(fake.requests).toHaveLength(0);
    });

    it('a consumer without origins cannot be used from a browser page', async () => {
      const res = await call('/macro/feeds?limit=1', { headers: { origin: APP, 'x-api-key': server.key } });
      expect(res.status).toBe(403);
      expect(fake.requests).toHaveLength(0);
    });

    it('an origin no consumer allows: 403 without any CORS grant, before auth', async () => {
      const res = await call('/macro/feeds?limit=1', {
        headers: { origin: 'https://evil.example', authorization: `Bearer ${web.key}` },
      });
      expect(res.status).toBe(403);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      expect(fake.requests).toHaveLength(0);
    });

    it('a missing key from an allowed origin is a readable 401', async () => {
      const res = await call('/macro/feeds?limit=1', { headers: { origin: APP } });
      expect(res.status).toBe(401);
      expect(res.headers['access-control-allow-origin']).toBe(APP);
    });

    it('no Origin (servers, curl): no CORS headers, but Vary: Origin for caches', async () => {
      const res = await call('/macro/feeds?limit=1', { headers: { 'x-api-key': server.key } });
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
      // JSON answers also vary on Accept-Encoding (compression).
      expect(res.headers.vary?.split(/,\s*/)).toEqual(['Origin', 'accept-encoding']);
    });

    it('same-origin calls (the console, the docs page) are not CORS', async () => {
      const host = new URL(gw.url).host;
      const res = await call('/macro/feeds?limit=1', {
        headers: { origin: gw.url, host, 'x-api-key': server.key },
      });
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBeUndefined();
    });
  });
});
