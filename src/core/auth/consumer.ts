import { paramNameMatcher } from '../http/param-name.js';

/** One of a consumer's keys: only its SHA-256 digest is kept. Several live at once during a rotation. */
export interface ConsumerKey {
  /** Short public name of the key (admin API, console, audit lines); never derived reversibly from it. */
  readonly id: string;
  readonly hash: Buffer;
  /** Epoch ms after which the key no longer opens the gateway (a rotation's overlap end); none → no end. */
  readonly expiresAt?: number;
  /** Epoch ms the key was issued (keys made by the admin API). */
  readonly createdAt?: number;
}

/**
 * Asymmetric JWS algorithms a consumer may accept end-user tokens with. Never `none`, never HMAC (`HS*`):
 * an HMAC token's "secret" would be the provider's public key, which anyone can read from its JWKS.
 */
export const TOKEN_ALGORITHMS = [
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'ES256',
  'ES384',
  'ES512',
  'EdDSA',
  'Ed25519',
] as const;

export type TokenAlgorithm = (typeof TOKEN_ALGORITHMS)[number];

/** End-user tokens (JWTs) from an OpenID Connect provider that a consumer accepts (`oidc` in its record). */
export interface ConsumerTokens {
  /** The provider's issuer: the token's `iss` must equal it; discovery is read from under it. */
  readonly issuer: string;
  /** The JWKS URL; absent → `jwks_uri` of `<issuer>/.well-known/openid-configuration`. */
  readonly jwksUri?: string;
  /** The token's `aud` must hold one of these (the app's client id at the provider). */
  readonly audience: readonly string[];
  readonly algorithms: readonly TokenAlgorithm[];
  /** Leeway for `exp` and `nbf`. */
  readonly clockSkewSeconds: number;
  /** After a JWKS fetch, an unknown `kid` triggers another only after this long (provider key rotation). */
  readonly jwksCooldownMs: number;
  /** Quota windows per end user (the token's `sub`), inside the consumer's own `limits`; empty → none. */
  readonly userLimits: readonly ConsumerLimit[];
}

/** An internal app allowed to call the gateway: from the consumers file or the admin API (see README). */
export interface ConsumerLimit {
  /** Name of the window, e.g. `per-second`. */
  readonly name: string;
  readonly ttlMs: number;
  readonly limit: number;
}

/** The two quota windows keygen and the sandbox's demo consumer give a consumer: a second and a minute. */
export function perSecondAndMinute(perSecond: number, perMinute: number): ConsumerLimit[] {
  return [
    { name: 'per-second', ttlMs: 1000, limit: perSecond },
    { name: 'per-minute', ttlMs: 60_000, limit: perMinute },
  ];
}

export interface Consumer {
  readonly id: string;
  /** SHA-256 digests of the consumer's keys. */
  readonly keyHashes: readonly Buffer[];
  /** The same keys with their ids and expiry; absent → derived from `keyHashes` (no expiry). */
  readonly keys?: readonly ConsumerKey[];
  /** `false`: every key of the consumer is refused (403) until an operator enables it; absent → enabled. */
  readonly enabled?: boolean;
  readonly upstreams: ReadonlySet<string>;
  /** May use POST/PUT/PATCH/DELETE. */
  readonly write: boolean;
  readonly limits: readonly ConsumerLimit[];
  /** Share of a scarce upstream budget relative to other consumers (default 1). */
  readonly weight: number;
  /** Fraction (0–1) of each upstream budget kept for this consumer when it is short. */
  readonly reservedShare: number;
  /** Browser origins allowed to call with this consumer's key (CORS). */
  readonly corsOrigins: readonly string[];
  /**
   * Sandbox only (the demo consumer): any `http://localhost:<port>` and `http://127.0.0.1:<port>` origin
   * is allowed too. Never read from the consumers file, so production CORS stays an explicit list.
   */
  readonly corsAnyLocalPort?: boolean;
  /** End-user tokens this consumer accepts besides its keys (absent: keys only). */
  readonly tokens?: ConsumerTokens;
}

/** Where consumers' keys may arrive, in the order they are looked for. */
export const CONSUMER_KEY_HEADERS = ['x-api-key', 'authorization'] as const;
/**
 * The guard reads a key from exactly these names (and `name[0]`); the credentials stage strips every name a
 * vendor may read as one of them (`normalizeParamName`), so each position the guard reads is also stripped.
 */
export const CONSUMER_KEY_QUERY_PARAMS = ['token', 'sessionId'] as const;

/** Whether a query parameter name is a consumer key position (`token`, `sessionId`, as normalizeParamName reads them). */
export const isConsumerKeyParam = paramNameMatcher(CONSUMER_KEY_QUERY_PARAMS);
