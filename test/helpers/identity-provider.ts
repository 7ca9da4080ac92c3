import { createHash, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { recordSecret } from '../observability/log-capture.js';

interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

interface PendingCode {
  readonly clientId: string;
  readonly redirectUri: string;
  readonly challenge: string;
}

/**
 * A real OpenID Connect provider on loopback, as far as a gateway reads one: the discovery document and the
 * JWKS, over HTTP on port 0. Its key can be rotated (the JWKS then lists the new key only), and it counts the
 * requests it received. Tests sign tokens with its keys (jose), or with keys of their own. For browser
 * tests it also signs a user in: the authorization-code flow with PKCE (S256), consent given at once for
 * the user `subject`, tokens whose audience is the client id.
 */
export class FakeIdentityProvider {
  private server?: Server;
  private base = '';
  private current?: SigningKey;
  private generation = 0;
  /** Paths requested, in order (discovery, JWKS). */
  readonly requested: string[] = [];
  /** Who signs in at /authorize. */
  subject = 'alice';
  /** Discovery answers 503 while set (a provider outage). */
  discoveryDown = false;
  private readonly codes = new Map<string, PendingCode>();

  constructor(private readonly alg: 'RS256' | 'ES256' = 'RS256') {}

  async start(): Promise<void> {
    this.current = await this.newKey();
    this.server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      this.requested.push(path);
      // Pages on other origins read discovery and redeem codes (public clients, as real providers allow).
      res.setHeader('access-control-allow-origin', '*');
      if (path === '/.well-known/openid-configuration' && this.discoveryDown) {
        res.writeHead(503).end();
      } else if (path === '/.well-known/openid-configuration') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            issuer: this.issuer,
            jwks_uri: this.jwksUri,
            authorization_endpoint: `${this.base}/authorize`,
            token_endpoint: `${this.base}/token`,
            response_types_supported: ['code'],
            code_challenge_methods_supported: ['S256'],
            id_token_signing_alg_values_supported: [this.alg],
          }),
        );
      } else if (path === '/authorize') {
        this.authorize(req, res);
      } else if (path === '/token' && req.method === 'POST') {
        void this.token(req, res);
      } else if (path === '/jwks') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ keys: [this.current!.publicJwk] }));
      } else {
        res.writeHead(404).end();
      }
    });
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    this.base = `http://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
  }

  /** The issuer URL (`iss` of its tokens). */
  get issuer(): string {
    return this.base;
  }

  get url(): string {
    return this.base;
  }

  get jwksUri(): string {
    return `${this.base}/jwks`;
  }

  get kid(): string {
    return this.current!.kid;
  }

  /** The current public key as published (what an HMAC confusion attack would use as its secret). */
  get publicJwk(): JWK {
    return this.current!.publicJwk;
  }

  jwksFetches(): number {
    return this.requested.filter((p) => p === '/jwks').length;
  }

  /** Replaces the signing key: the JWKS lists only the new `kid` from now on. */
  async rotate(): Promise<void> {
    this.current = await this.newKey();
  }

  /** A token signed with the current key: `iss` this provider, `exp` in 5 minutes unless `claims` says. */
  async sign(claims: JWTPayload, header: { kid?: string; jwk?: JWK } = {}): Promise<string> {
    const now = Math.floor(Date.now() / 1000);
    const token = await new SignJWT({ iss: this.issuer, iat: now, exp: now + 300, ...claims })
      .setProtectedHeader({
        alg: this.alg,
        kid: header.kid ?? this.current!.kid,
        typ: 'JWT',
        ...(header.jwk ? { jwk: header.jwk } : {}),
      })
      .sign(this.current!.privateKey);
    // The post-run log scan looks for every token a test used.
    recordSecret(token);
    return token;
  }

  /** Consent at once: back to the client's redirect URI with a one-time code bound to its PKCE challenge. */
  private authorize(req: IncomingMessage, res: ServerResponse): void {
    const q = new URL(req.url ?? '/', this.base).searchParams;
    const redirectUri = q.get('redirect_uri') ?? '';
    const challenge = q.get('code_challenge') ?? '';
    if (q.get('response_type') !== 'code' || q.get('code_challenge_method') !== 'S256' || !challenge) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('authorization-code flow with PKCE S256 only');
      return;
    }
    const code = randomBytes(16).toString('base64url');
    this.codes.set(code, { clientId: q.get('client_id') ?? '', redirectUri, challenge });
    const back = new URL(redirectUri);
    back.searchParams.set('code', code);
    back.searchParams.set('state', q.get('state') ?? '');
    res.writeHead(302, { location: back.toString() }).end();
  }

  /** Redeems a code once, checking the client, the redirect URI and the PKCE verifier. */
  private async token(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const form = new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
    const pending = this.codes.get(form.get('code') ?? '');
    this.codes.delete(form.get('code') ?? '');
    const verifier = form.get('code_verifier') ?? '';
    const challenge = createHash('sha256').update(verifier).digest('base64url');
    if (
      !pending ||
      form.get('grant_type') !== 'authorization_code' ||
      pending.clientId !== form.get('client_id') ||
      pending.redirectUri !== form.get('redirect_uri') ||
      pending.challenge !== challenge
    ) {
      res.writeHead(400, { 'content-type': 'application/json' }).end('{"error":"invalid_grant"}');
      return;
    }
    const accessToken = await this.sign({ sub: this.subject, aud: pending.clientId });
    res.writeHead(200, { 'content-type': 'application/json', 'cache-control': 'no-store' });
    res.end(JSON.stringify({ access_token: accessToken, token_type: 'Bearer', expires_in: 300 }));
  }

  reset(): void {
    this.requested.length = 0;
  }

  async close(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  private async newKey(): Promise<SigningKey> {
    const { privateKey, publicKey } = await generateKeyPair(this.alg, { extractable: true });
    const kid = `k${++this.generation}-${Math.random().toString(36).slice(2, 8)}`;
    return {
      kid,
      privateKey,
      publicJwk: { ...(await exportJWK(publicKey)), kid, alg: this.alg, use: 'sig' },
    };
  }
}
