import {
  createRemoteJWKSet,
  decodeJwt,
  errors as jose,
  jwtVerify,
  type JWTPayload,
  type JWTVerifyGetKey,
} from 'jose';
import { request } from 'undici';
import { SYSTEM_CLOCK, type Clock } from '../time/clock.js';
import { GatewayError } from '../errors/gateway-error.js';
import type { Consumer, ConsumerTokens } from './consumer.js';
import { isProviderUrl } from './consumer-record.js';

/** Compact JWS: three base64url parts, the first two non-empty. Consumer keys (`atr_…`) hold no dot. */
const JWT_SHAPE = /^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*$/;

/** Whether a presented credential is a JWT (checked against the consumers that accept tokens). */
export function looksLikeJwt(value: string): boolean {
  return value.length > 8 && JWT_SHAPE.test(value);
}

/** What a token refusal says (RFC 6750 `error_description`): fixed texts only, never a claim's value. */
export const TOKEN_REFUSALS = {
  malformed: 'malformed token',
  noIssuer: 'no issuer (iss) claim',
  issuer: 'issuer not accepted',
  audience: 'wrong audience',
  expired: 'token expired',
  notYetValid: 'token not yet valid (nbf)',
  noExpiry: 'no expiry (exp) claim',
  algorithm: 'algorithm not allowed',
  unknownKey: 'unknown signing key (kid)',
  signature: 'signature invalid',
  claim: 'a claim is invalid',
} as const satisfies Record<string, string>;

export type TokenRefusal = keyof typeof TOKEN_REFUSALS;

/** 401 with the RFC 6750 challenge saying why (the envelope's message says it too). */
export function invalidToken(why: TokenRefusal): GatewayError {
  const description = TOKEN_REFUSALS[why];
  return GatewayError.expected('UNAUTHENTICATED', {
    message: `The bearer token is not accepted: ${description}.`,
    authChallenge: `Bearer realm="atrium", error="invalid_token", error_description="${description}"`,
  });
}

function claimsOf(token: string): JWTPayload | undefined {
  try {
    return decodeJwt(token);
  } catch {
    return undefined;
  }
}

/**
 * The consumer a token names by its (not yet verified) `iss` and `aud`, or why none: the issuer picks the
 * consumers that accept it, the audience the one of them. Never trusted alone: TokenVerifier checks the
 * signature and claims with that consumer's settings; CORS uses it only to refuse an origin early.
 */
export function claimedConsumer(
  store: { acceptingTokensFrom(issuer: string): readonly Consumer[] },
  token: string,
): Consumer | TokenRefusal {
  const claims = claimsOf(token);
  if (!claims) return 'malformed';
  if (typeof claims.iss !== 'string') return 'noIssuer';
  const accepting = store.acceptingTokensFrom(claims.iss);
  if (accepting.length === 0) return 'issuer';
  const aud = typeof claims.aud === 'string' ? [claims.aud] : Array.isArray(claims.aud) ? claims.aud : [];
  return accepting.find((c) => c.tokens!.audience.some((a) => aud.includes(a))) ?? 'audience';
}

/** The library's refusal → what the consumer is told. */
function refusalOf(e: unknown): TokenRefusal | undefined {
  if (e instanceof jose.JWTExpired) return 'expired';
  if (e instanceof jose.JWTClaimValidationFailed) {
    if (e.claim === 'nbf') return 'notYetValid';
    if (e.claim === 'aud') return 'audience';
    if (e.claim === 'iss') return 'issuer';
    if (e.claim === 'exp') return 'noExpiry';
    return 'claim';
  }
  if (e instanceof jose.JOSEAlgNotAllowed) return 'algorithm';
  if (e instanceof jose.JWKSNoMatchingKey || e instanceof jose.JWKSMultipleMatchingKeys) return 'unknownKey';
  if (e instanceof jose.JWSSignatureVerificationFailed) return 'signature';
  if (e instanceof jose.JWSInvalid || e instanceof jose.JWTInvalid || e instanceof jose.JOSENotSupported)
    return 'malformed';
  return undefined; // the provider's keys could not be had: not the token's fault
}

const FETCH_TIMEOUT_MS = 5_000;
const MAX_DISCOVERY_BYTES = 256 * 1024;
/** A discovered `jwks_uri` is re-read this often (the keys themselves follow jose's cache and `kid` misses). */
const DISCOVERY_MAX_AGE_MS = 60 * 60_000;
/** A failed discovery is tried again only after this long: a burst of tokens is not a burst of fetches. */
const DISCOVERY_RETRY_MS = 5_000;

interface Discovered {
  readonly at: number;
  readonly jwksUri: Promise<string>;
  failed?: boolean;
}

/** A provider that did not answer: 503, retryable, never blamed on the token. */
function providerDown(cause: unknown): GatewayError {
  return new GatewayError('UPSTREAM_UNAVAILABLE', {
    message: "The identity provider's signing keys could not be fetched; retry later.",
    cause,
  });
}

/**
 * Checks end-user tokens (docs/frontend.md): picks the consumer by `iss` and `aud`, then verifies with
 * `jose` against that issuer's JWKS (`createRemoteJWKSet`: cached, refetched when a token names an unknown
 * `kid`, so a provider's key rotation needs no restart) with the consumer's audience, algorithms (asymmetric
 * only) and clock skew. The JWKS URL is the consumer's `jwksUri`, or the provider's OIDC discovery document.
 */
export class TokenVerifier {
  private readonly keySets = new Map<string, JWTVerifyGetKey>();
  private readonly discovered = new Map<string, Discovered>();

  constructor(
    private readonly store: { acceptingTokensFrom(issuer: string): readonly Consumer[] },
    private readonly clock: Clock = SYSTEM_CLOCK,
  ) {}

  /**
   * The consumer the token stands for (disabled ones included, as for keys) and the user (`sub`, when the
   * token has one), or a 401 saying why.
   */
  async authenticate(token: string): Promise<{ consumer: Consumer; subject?: string }> {
    const consumer = claimedConsumer(this.store, token);
    if (typeof consumer === 'string') throw invalidToken(consumer);
    const t = consumer.tokens!;
    const keys = await this.keySetOf(t);
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, keys, {
        issuer: t.issuer,
        audience: [...t.audience],
        algorithms: [...t.algorithms],
        clockTolerance: t.clockSkewSeconds,
        currentDate: new Date(this.clock.now()),
        requiredClaims: ['exp'],
      }));
    } catch (e) {
      const why = refusalOf(e);
      if (why === undefined) throw providerDown(e);
      throw invalidToken(why);
    }
    return typeof payload.sub === 'string' ? { consumer, subject: payload.sub } : { consumer };
  }

  private async keySetOf(t: ConsumerTokens): Promise<JWTVerifyGetKey> {
    const url = t.jwksUri ?? (await this.discover(t.issuer));
    const id = `${t.jwksCooldownMs} ${url}`;
    let set = this.keySets.get(id);
    if (!set) {
      set = createRemoteJWKSet(new URL(url), {
        timeoutDuration: FETCH_TIMEOUT_MS,
        cooldownDuration: t.jwksCooldownMs,
      });
      this.keySets.set(id, set);
    }
    return set;
  }

  /** `jwks_uri` from `<issuer>/.well-known/openid-configuration`; a failed read is retried on the next token. */
  private async discover(issuer: string): Promise<string> {
    const now = this.clock.now();
    let known = this.discovered.get(issuer);
    if (!known || now - known.at >= (known.failed ? DISCOVERY_RETRY_MS : DISCOVERY_MAX_AGE_MS)) {
      const entry: Discovered = { at: now, jwksUri: readDiscovery(issuer) };
      // Marked when it fails (awaited below, so never an unhandled rejection).
      entry.jwksUri.catch(() => (entry.failed = true));
      this.discovered.set(issuer, entry);
      known = entry;
    }
    try {
      return await known.jwksUri;
    } catch (e) {
      throw providerDown(e);
    }
  }
}

async function readDiscovery(issuer: string): Promise<string> {
  const url = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
  const res = await request(url, {
    headersTimeout: FETCH_TIMEOUT_MS,
    bodyTimeout: FETCH_TIMEOUT_MS,
    headers: { accept: 'application/json' },
  });
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of res.body as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_DISCOVERY_BYTES) {
      res.body.destroy();
      throw new Error('OIDC discovery document too large');
    }
    chunks.push(chunk);
  }
  if (res.statusCode !== 200) throw new Error(`OIDC discovery answered ${res.statusCode}`);
  const doc = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { issuer?: unknown; jwks_uri?: unknown };
  // OIDC Discovery §4.3: the document's issuer must be the one it was read for.
  if (doc.issuer !== issuer) throw new Error('OIDC discovery document names another issuer');
  if (typeof doc.jwks_uri !== 'string' || !isProviderUrl(doc.jwks_uri))
    throw new Error('OIDC discovery document has no usable jwks_uri');
  return doc.jwks_uri;
}
