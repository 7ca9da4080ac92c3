import { SignJWT } from 'jose';
import { parseConsumer } from '../../src/core/auth/consumer-record.js';
import type { Consumer } from '../../src/core/auth/consumer.js';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, type HttpResult, withGateway } from '../helpers/gateway.js';
import { FakeIdentityProvider } from '../helpers/identity-provider.js';
import { recordSecret } from '../observability/log-capture.js';

const TOKEN = 'sbx_macro_oidc_secret_7c2d';
const APP = 'https://app.example';
const OTHER = 'https://other.example';
const AUD = 'atrium-web';
const ROUTE = '/macro/feeds?limit=1';
const UPSTREAMS = ['macro', 'company', 'documents', 'deals'];

const b64 = (v: unknown): string => Buffer.from(JSON.stringify(v)).toString('base64url');
const now = (): number => Math.floor(Date.now() / 1000);

/** A consumer as the consumers file or the admin API gives it: through the same validation. */
function fromRecord(record: Record<string, unknown>): Consumer {
  return parseConsumer({ upstreams: ['macro'], ...record }, 0, UPSTREAMS);
}

describe('end-user tokens from an OpenID Connect provider (JWT bearer)', () => {
  // The company IdP (discovery), a partner IdP configured by JWKS URL, and an IdP nobody configured.
  const idp = new FakeIdentityProvider('RS256');
  const partnerIdp = new FakeIdentityProvider('ES256');
  const rogueIdp = new FakeIdentityProvider('RS256');
  const downIdp = new FakeIdentityProvider('RS256');
  const fake = new FakeMacroUpstream({ token: TOKEN });
  const server = testConsumer({ id: 'server', upstreams: new Set(['macro']) });
  const gw = withGateway({
    upstreams: { macro: { fake, token: TOKEN } },
    servers: [idp, partnerIdp, rogueIdp, downIdp],
    consumers: () => [
      // Tokens only: no key anywhere near the page. A 0 ms cooldown lets the rotation test refetch at once.
      fromRecord({
        id: 'web',
        corsOrigins: [APP],
        oidc: { issuer: idp.issuer, audience: AUD, jwksCooldownMs: 0 },
      }),
      fromRecord({
        id: 'partner',
        corsOrigins: [OTHER],
        oidc: { issuer: partnerIdp.issuer, jwksUri: partnerIdp.jwksUri, audience: ['partner-app'] },
      }),
      // Each end user of this app gets 2 requests a minute, inside the app's 100.
      fromRecord({
        id: 'metered',
        limits: [{ name: 'per-minute', ttlMs: 60_000, limit: 100 }],
        oidc: {
          issuer: idp.issuer,
          audience: 'metered-app',
          userLimits: [{ name: 'per-minute', ttlMs: 60_000, limit: 2 }],
        },
      }),
      // A provider whose discovery is down.
      fromRecord({ id: 'outage', oidc: { issuer: downIdp.issuer, audience: 'outage-app' } }),
      // A provider that never answers: its keys cannot be had.
      fromRecord({
        id: 'down',
        oidc: { issuer: 'http://127.0.0.1:9', jwksUri: 'http://127.0.0.1:9/jwks', audience: 'down-app' },
      }),
      server,
    ],
  });

  const seen: string[] = [];
  async function call(token: string, headers: Record<string, string> = {}): Promise<HttpResult> {
    seen.push(token);
    return http(gw.url + ROUTE, { headers: { authorization: `Bearer ${token}`, ...headers } });
  }

  /** No request the vendor received holds any token this suite sent, anywhere. */
  function expectNoTokenReachedVendor(): void {
    for (const r of fake.requests) {
      const all = r.url + JSON.stringify(r.headers) + r.body.toString('latin1');
      for (const t of seen) expect(all.includes(t.split('.')[2] || t)).toBe(false);
      expect(r.headers.authorization ?? '').not.toMatch(/^Bearer ey/);
    }
  }
  afterEach(expectNoTokenReachedVendor);

  function expectRefused(res: HttpResult, description: string): void {
    expect(res.status).toBe(401);
    expect(res.headers['www-authenticate']).toBe(
      `Bearer realm="atrium", error="invalid_token", error_description="${description}"`,
    );
    const body = res.json();
    expect(body.error.code).toBe('UNAUTHENTICATED');
    expect(body.error.message).toBe(`The bearer token is not accepted: ${description}.`);
    expect(body.error.requestId).toBeTruthy();
    expect(fake.requests).toHaveLength(0);
  }

  it('a valid token from the IdP (found by OIDC discovery) opens the route; the vendor never sees it', async () => {
    const token = await idp.sign({ sub: 'alice', aud: AUD });
    const res = await call(token);
    expect(res.status).toBe(200);
    expect(fake.requests).toHaveLength(1);
    // The vendor got the gateway's own credential, not the user's.
    expect(JSON.stringify(fake.requests[0])).not.toContain(token);
    expect(idp.requested).toEqual(expect.arrayContaining(['/.well-known/openid-configuration', '/jwks']));
  });

  it('a provider configured by JWKS URL (no discovery) works the same, with ES256', async () => {
    partnerIdp.reset();
    const res = await call(await partnerIdp.sign({ sub: 'bob', aud: ['other', 'partner-app'] }));
    expect(res.status).toBe(200);
    expect(partnerIdp.requested).toEqual(['/jwks']);
  });

  it('gateway keys still work beside tokens', async () => {
    const res = await http(gw.url + ROUTE, { headers: { authorization: `Bearer ${server.key}` } });
    expect(res.status).toBe(200);
  });

  it('alg "none" is refused', async () => {
    const token = `${b64({ alg: 'none', typ: 'JWT' })}.${b64({ iss: idp.issuer, aud: AUD, sub: 'x', exp: now() + 300 })}.`;
    recordSecret(token);
    expectRefused(await call(token), 'algorithm not allowed');
  });

  it("an HS256 token signed with the provider's public key as the secret is refused", async () => {
    const secret = new TextEncoder().encode(JSON.stringify(idp.publicJwk));
    const token = await new SignJWT({ iss: idp.issuer, aud: AUD, sub: 'mallory', exp: now() + 300 })
      .setProtectedHeader({ alg: 'HS256', kid: idp.kid })
      .sign(secret);
    recordSecret(token);
    expectRefused(await call(token), 'algorithm not allowed');
  });

  it('an expired token is refused; one expired within the clock skew (30 s) is not', async () => {
    expectRefused(await call(await idp.sign({ sub: 'a', aud: AUD, exp: now() - 120 })), 'token expired');
    const res = await call(await idp.sign({ sub: 'a', aud: AUD, exp: now() - 5 }));
    expect(res.status).toBe(200);
  });

  it('a token not yet valid (nbf) is refused', async () => {
    expectRefused(
      await call(await idp.sign({ sub: 'a', aud: AUD, nbf: now() + 600, exp: now() + 900 })),
      'token not yet valid (nbf)',
    );
  });

  it('a token without exp is refused', async () => {
    expectRefused(
      await call(await idp.sign({ sub: 'a', aud: AUD, exp: undefined })),
      'no expiry (exp) claim',
    );
  });

  it('a wrong issuer is refused', async () => {
    expectRefused(
      await call(await idp.sign({ sub: 'a', aud: AUD, iss: 'https://login.evil.example' })),
      'issuer not accepted',
    );
  });

  it('a wrong audience is refused', async () => {
    expectRefused(await call(await idp.sign({ sub: 'a', aud: 'some-other-app' })), 'wrong audience');
  });

  it('a token from a different provider that claims the issuer is refused (its key is not in the JWKS)', async () => {
    const forged = await rogueIdp.sign({ iss: idp.issuer, sub: 'a', aud: AUD });
    expectRefused(await call(forged), 'unknown signing key (kid)');
    // Even naming the real provider's kid: the signature does not verify with the real key.
    const sameKid = await rogueIdp.sign({ iss: idp.issuer, sub: 'a', aud: AUD }, { kid: idp.kid });
    expectRefused(await call(sameKid), 'signature invalid');
  });

  it('malformed tokens are refused as such', async () => {
    expectRefused(await call('eyJhbGciOi.eyJpc3Mi.sig'), 'malformed token');
    const noIss = `${b64({ alg: 'RS256' })}.${b64({ sub: 'x' })}.c2ln`;
    expectRefused(await call(noIss), 'no issuer (iss) claim');
  });

  it('a provider key rotation is picked up without a restart; the retired key stops working', async () => {
    const before = await idp.sign({ sub: 'carol', aud: AUD });
    expect((await call(before)).status).toBe(200);
    fake.reset();
    const fetches = idp.jwksFetches();
    await idp.rotate();
    const after = await idp.sign({ sub: 'carol', aud: AUD });
    const res = await call(after);
    expect(res.status).toBe(200);
    expect(idp.jwksFetches()).toBe(fetches + 1);
    fake.reset();
    // The JWKS now lists only the new key.
    expectRefused(await call(before), 'unknown signing key (kid)');
  });

  it("a provider whose keys cannot be fetched is a 503 (not the token's fault), no vendor call", async () => {
    const token = `${b64({ alg: 'RS256', kid: 'x' })}.${b64({ iss: 'http://127.0.0.1:9', aud: 'down-app', exp: now() + 60 })}.c2ln`;
    recordSecret(token);
    const res = await call(token);
    expect(res.status).toBe(503);
    expect(res.json().error.code).toBe('UPSTREAM_UNAVAILABLE');
    expect(fake.requests).toHaveLength(0);
  });

  it("a per-user quota (userLimits) counts each end user (sub) apart, inside the consumer's quota", async () => {
    const as = async (sub: string) => call(await idp.sign({ sub, aud: 'metered-app' }));
    for (let i = 0; i < 2; i++) expect((await as('dave')).status).toBe(200);
    const refused = await as('dave');
    expect(refused.status).toBe(429);
    expect(refused.json().error).toMatchObject({ code: 'CONSUMER_RATE_LIMITED' });
    expect(refused.json().error.message).toContain('This user of consumer "metered"');
    expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
    // Another user of the same app is not held back; the app's own quota counted all four requests (the
    // consumer's windows are counted first, the user's inside them).
    const erin = await as('erin');
    expect(erin.status).toBe(200);
    expect(erin.headers['ratelimit-remaining']).toBe('96');
  });

  it('a provider whose discovery fails: 503, and a burst of tokens is one discovery request', async () => {
    downIdp.discoveryDown = true;
    const token = await downIdp.sign({ sub: 'a', aud: 'outage-app' });
    for (let i = 0; i < 3; i++) {
      const res = await call(token);
      expect(res.status).toBe(503);
      expect(res.json().error.message).toContain('identity provider');
    }
    expect(downIdp.requested).toEqual(['/.well-known/openid-configuration']);
    expect(fake.requests).toHaveLength(0);
  });

  describe('from a browser page (CORS)', () => {
    it('a token of a consumer that lists the origin: readable 200', async () => {
      const res = await call(await idp.sign({ sub: 'alice', aud: AUD }), { origin: APP });
      expect(res.status).toBe(200);
      expect(res.headers['access-control-allow-origin']).toBe(APP);
    });

    it('a token of a consumer that does not list the origin: 403 before any vendor call', async () => {
      const res = await call(await idp.sign({ sub: 'alice', aud: AUD }), { origin: OTHER });
      expect(res.status).toBe(403);
      expect(res.json().error.message).toContain('"web"');
      expect(fake.requests).toHaveLength(0);
    });

    it('a refused token is a readable 401 with its reason', async () => {
      const res = await call(await idp.sign({ sub: 'a', aud: AUD, exp: now() - 600 }), { origin: APP });
      expect(res.status).toBe(401);
      expect(res.headers['access-control-allow-origin']).toBe(APP);
      expect(res.headers['www-authenticate']).toContain('token expired');
    });
  });
});
