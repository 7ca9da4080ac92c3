import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, SignJWT, type CryptoKey, type JWK, type JWTPayload } from 'jose';
import { recordSecret } from '../observability/log-capture.js';

interface SigningKey {
  readonly kid: string;
  readonly privateKey: CryptoKey;
  readonly publicJwk: JWK;
}

/**
 * A real OpenID Connect provider on loopback, as far as a gateway reads one: the discovery document and the
 * JWKS, over HTTP on port 0. Its key can be rotated (the JWKS then lists the new key only), and it counts the
 * requests it received. Tests sign tokens with its keys (jose), or with keys of their own.
 */
export class FakeIdentityProvider {
  private server?: Server;
  private base = '';
  private current?: SigningKey;
  private generation = 0;
  /** Paths requested, in order (discovery, JWKS). */
  readonly requested: string[] = [];

  constructor(private readonly alg: 'RS256' | 'ES256' = 'RS256') {}

  async start(): Promise<void> {
    this.current = await this.newKey();
    this.server = createServer((req, res) => {
      const path = (req.url ?? '/').split('?')[0];
      this.requested.push(path);
      if (path === '/.well-known/openid-configuration') {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            issuer: this.issuer,
            jwks_uri: this.jwksUri,
            id_token_signing_alg_values_supported: [this.alg],
          }),
        );
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
