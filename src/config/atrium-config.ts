import 'reflect-metadata';
import { randomBytes } from 'node:crypto';
import { isIP } from 'node:net';
import { plainToInstance, Type } from 'class-transformer';
import {
  IsIn,
  IsInt,
  IsNumber,
  IsOptional,
  IsString,
  IsUrl,
  Max,
  Min,
  MinLength,
  validateSync,
} from 'class-validator';
import { RETRY_AFTER_CEILING_SECONDS } from '../core/http/retry-after.js';

/** The upstream interfaces Atrium fronts; each has an `UPSTREAM_<NAME>_*` config namespace. */
export const UPSTREAM_NAMES = ['macro', 'company', 'documents', 'deals'] as const;
export type UpstreamName = (typeof UPSTREAM_NAMES)[number];

export class ConfigError extends Error {}

const DAY_MS = 24 * 60 * 60 * 1000;

/** Response cache settings (durations in ms). */
export interface CacheConfig {
  /** Byte cap of the in-memory store (LRU by bytes). */
  readonly maxBytes: number;
  /** Answers larger than this are served but not stored. */
  readonly maxEntryBytes: number;
  /** TTL per route family: `family` or `upstream.family` → ms (0 = never cached). */
  readonly ttlOverrides: Readonly<Record<string, number>>;
  /** After the TTL, served stale while one background refresh runs. */
  readonly staleWhileRevalidateMs: number;
  /** After the TTL, served stale instead of a retryable upstream error. */
  readonly staleIfErrorMs: number;
  /** How long an upstream 404 is remembered (0 = never). */
  readonly negativeTtlMs: number;
  /** Lease of the fleet-wide in-flight marker; the leader renews it while its call runs. */
  readonly coalesceLeaseMs: number;
  /** Timeout of every cache command sent to Redis. */
  readonly redisTimeoutMs: number;
}

const DURATION = /^(\d+(?:\.\d+)?)(ms|s|m|h)?$/;
const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * `feeds=10s,macro.layout=30m,dictionary=0`: per-family TTL overrides (`upstream.family` beats `family`).
 * Returns undefined when the text is malformed, so the caller can name the variable.
 */
export function parseTtlOverrides(text: string | undefined): Record<string, number> | undefined {
  const out: Record<string, number> = {};
  if (!text || !text.trim()) return out;
  for (const part of text.split(',')) {
    const item = part.trim();
    if (!item) continue;
    const eq = item.indexOf('=');
    if (eq <= 0) return undefined;
    const name = item.slice(0, eq).trim();
    const m = DURATION.exec(item.slice(eq + 1).trim());
    if (!/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)?$/.test(name) || !m) return undefined;
    const ms = Math.round(Number(m[1]) * UNIT_MS[m[2] ?? 'ms']);
    if (!(ms >= 0 && ms <= 30 * DAY_MS)) return undefined;
    out[name] = ms;
  }
  return out;
}

/** Process-wide settings. Secrets have no defaults. */
class GatewayEnv {
  @Type(() => Number) @IsInt() @Min(0) @Max(65535) PORT = 3000;
  @IsString() HOST = '0.0.0.0';
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['redis', 'rediss'], require_protocol: true })
  REDIS_URL?: string;
  /** Prefix of every Redis key this gateway fleet writes (tests use a unique one each). */
  @IsString() @MinLength(1) ATRIUM_REDIS_PREFIX = 'atrium:';
  @IsOptional() @IsString() @MinLength(1) ATRIUM_CONSUMERS_FILE?: string;
  @IsIn(['auto', 'on', 'off']) ATRIUM_SANDBOX = 'auto';
  @IsIn(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']) LOG_LEVEL = 'info';
  /** `development` turns on human-readable (pretty) logs; anything else logs JSON lines. */
  @IsOptional() @IsString() NODE_ENV?: string;
  /** Bearer token that `GET /metrics` requires when set (a secret: no default). */
  @IsOptional() @IsString() @MinLength(16) ATRIUM_METRICS_TOKEN?: string;
  @Type(() => Number) @IsInt() @Min(1024) @Max(64 * 1024 * 1024) ATRIUM_BODY_LIMIT_BYTES = 1024 * 1024;
  @Type(() => Number) @IsInt() @Min(1024) @Max(512 * 1024 * 1024) ATRIUM_MAX_RESPONSE_BYTES =
    10 * 1024 * 1024;
  @Type(() => Number) @IsInt() @Min(1) @Max(3600) ATRIUM_DEFAULT_RETRY_AFTER_SECONDS = 30;
  @Type(() => Number) @IsInt() @Min(0) @Max(120_000) ATRIUM_SHUTDOWN_GRACE_MS = 10_000;
  // Response cache (issue 8). Durations in ms.
  @Type(() => Number) @IsInt() @Min(0) @Max(64 * 1024 * 1024 * 1024) ATRIUM_CACHE_MAX_BYTES =
    128 * 1024 * 1024;
  @Type(() => Number) @IsInt() @Min(0) @Max(512 * 1024 * 1024) ATRIUM_CACHE_MAX_ENTRY_BYTES =
    10 * 1024 * 1024;
  @IsOptional() @IsString() ATRIUM_CACHE_TTL_OVERRIDES?: string;
  @Type(() => Number) @IsInt() @Min(0) @Max(7 * DAY_MS) ATRIUM_CACHE_STALE_WHILE_REVALIDATE_MS = 30_000;
  @Type(() => Number) @IsInt() @Min(0) @Max(7 * DAY_MS) ATRIUM_CACHE_STALE_IF_ERROR_MS = 10 * 60_000;
  @Type(() => Number) @IsInt() @Min(0) @Max(DAY_MS) ATRIUM_CACHE_NEGATIVE_TTL_MS = 0;
  @Type(() => Number) @IsInt() @Min(100) @Max(600_000) ATRIUM_CACHE_COALESCE_LEASE_MS = 3_000;
  @Type(() => Number) @IsInt() @Min(10) @Max(10_000) ATRIUM_CACHE_REDIS_TIMEOUT_MS = 250;
  /** Operator key of the admin API (secret; no default: the admin API is off without it). */
  @IsOptional() @IsString() @MinLength(16) ATRIUM_ADMIN_TOKEN?: string;
  // Front end and operators (batch, CORS, console).
  @Type(() => Number) @IsInt() @Min(1) @Max(100) ATRIUM_BATCH_MAX_ITEMS = 20;
  @Type(() => Number) @IsInt() @Min(100) @Max(120_000) ATRIUM_BATCH_TIMEOUT_MS = 10_000;
  @Type(() => Number) @IsInt() @Min(0) @Max(86_400) ATRIUM_CORS_MAX_AGE_SECONDS = 600;
  /** Secret: no default. Unset → the operator console is off. */
  @IsOptional() @IsString() @MinLength(16) ATRIUM_OPERATOR_TOKEN?: string;
  // Gateway-signed download links (README "Key custody").
  /** HMAC key of signed links (secret: no default; unset → a random one per process). */
  @IsOptional() @IsString() @MinLength(32) ATRIUM_LINK_SECRET?: string;
  @Type(() => Number) @IsInt() @Min(60) @Max(7 * 86_400) ATRIUM_LINK_TTL_SECONDS = 3_600;
  /** Where consumers reach the gateway, for absolute signed links; unset → root-relative links. */
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  ATRIUM_PUBLIC_URL?: string;
  // Operators (issue 16): usage counting, tracing, client addresses.
  @IsIn(['on', 'off']) ATRIUM_USAGE = 'on';
  /** Proxies whose `X-Forwarded-For` is believed: comma-separated addresses or CIDRs (Fastify's trustProxy). */
  @IsOptional() @IsString() ATRIUM_TRUSTED_PROXIES?: string;
  /** OTLP/HTTP collector (the OpenTelemetry variable); unset → no span is recorded or exported. */
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  @IsString() @MinLength(1) OTEL_SERVICE_NAME = 'atrium';
}

/** One upstream's settings, read from `UPSTREAM_<NAME>_<FIELD>`. */
class UpstreamEnv {
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  BASE_URL?: string;
  @IsOptional() @IsString() @MinLength(6) TOKEN?: string;
  @IsOptional() @IsString() @MinLength(1) USERNAME?: string;
  @IsOptional() @IsString() @MinLength(1) PASSWORD?: string;
  @Type(() => Number) @Min(0.01) @Max(100_000) RATE_PER_SEC = 10;
  @Type(() => Number) @IsInt() @Min(1) @Max(100_000) BURST = 20;
  @Type(() => Number) @IsInt() @Min(100) @Max(600_000) TIMEOUT_MS = 10_000;
  @Type(() => Number) @IsInt() @Min(100) @Max(60_000) CONNECT_TIMEOUT_MS = 3_000;
  @Type(() => Number) @IsInt() @Min(1) @Max(1024) CONNECTIONS = 32;
  // The login step (documents, deals): how long a session lives, how early it is renewed, and how a
  // failing login backs off (doubling from LOGIN_BACKOFF_MS up to LOGIN_BACKOFF_MAX_MS).
  @Type(() => Number) @IsInt() @Min(1_000) @Max(7 * 86_400_000) SESSION_TTL_MS = 86_400_000;
  @Type(() => Number) @IsInt() @Min(0) @Max(7 * 86_400_000) SESSION_REFRESH_MARGIN_MS = 3_600_000;
  @Type(() => Number) @IsInt() @Min(10) @Max(3_600_000) LOGIN_BACKOFF_MS = 1_000;
  @Type(() => Number) @IsInt() @Min(10) @Max(86_400_000) LOGIN_BACKOFF_MAX_MS = 300_000;

  // Rate-limit shield (src/proxy/limits). Optional ones default relative to RATE_PER_SEC (see below).
  /** How long a request may wait for an upstream token before it gets 429 UPSTREAM_RATE_LIMITED. */
  @Type(() => Number) @IsInt() @Min(0) @Max(60_000) MAX_WAIT_MS = 1_000;
  /** Fraction of the budget one replica may spend on its own while Redis is configured but down. */
  @Type(() => Number) @IsNumber() @Min(0.01) @Max(1) LOCAL_SHARE = 0.25;
  @IsIn(['on', 'off']) AIMD = 'on';
  @IsOptional() @Type(() => Number) @IsNumber() @Min(0.01) @Max(100_000) AIMD_MIN_RATE?: number;
  @IsOptional() @Type(() => Number) @IsNumber() @Min(0.01) @Max(100_000) AIMD_MAX_RATE?: number;
  @Type(() => Number) @IsNumber() @Min(0.05) @Max(0.95) AIMD_DECREASE = 0.5;
  @IsOptional() @Type(() => Number) @IsNumber() @Min(0.001) @Max(100_000) AIMD_INCREASE_PER_SEC?: number;
  @Type(() => Number) @IsNumber() @Min(0.05) @Max(1) BREAKER_FAILURE_RATIO = 0.5;
  @Type(() => Number) @IsInt() @Min(1) @Max(10_000) BREAKER_MIN_SAMPLE = 10;
  @Type(() => Number) @IsInt() @Min(1_000) @Max(600_000) BREAKER_WINDOW_MS = 10_000;
  @Type(() => Number) @IsInt() @Min(100) @Max(600_000) BREAKER_OPEN_MS = 5_000;
  /** Attempts per idempotent GET, the first included (1 = no retries). */
  @Type(() => Number) @IsInt() @Min(1) @Max(10) RETRY_ATTEMPTS = 3;
  @Type(() => Number) @IsInt() @Min(1) @Max(60_000) RETRY_BASE_MS = 100;
  @Type(() => Number) @IsInt() @Min(1) @Max(600_000) RETRY_MAX_BACKOFF_MS = 2_000;
  @Type(() => Number) @IsNumber() @Min(0) @Max(1) RETRY_BUDGET_RATIO = 0.2;
  /** Cooldown after an upstream 429 without a usable reset header (default ATRIUM_DEFAULT_RETRY_AFTER_SECONDS). */
  @IsOptional() @Type(() => Number) @IsInt() @Min(1) @Max(3600) COOLDOWN_DEFAULT_SECONDS?: number;
  /**
   * The longest cooldown after an upstream 429: caps the default as it doubles on repeated header-less 429s,
   * and the vendor's own `Retry-After` / reset header (an absurd one must not close the upstream for a day).
   */
  @Type(() => Number) @IsInt() @Min(1) @Max(RETRY_AFTER_CEILING_SECONDS) COOLDOWN_MAX_SECONDS = 600;
}

/** The rate-limit shield's settings for one upstream (all derived defaults already applied). */
export interface UpstreamLimitsConfig {
  readonly maxWaitMs: number;
  readonly localShare: number;
  readonly aimd: {
    readonly enabled: boolean;
    readonly minRate: number;
    readonly maxRate: number;
    readonly decrease: number;
    readonly increasePerSec: number;
  };
  readonly breaker: {
    readonly failureRatio: number;
    readonly minSample: number;
    readonly windowMs: number;
    readonly openMs: number;
  };
  readonly retry: {
    readonly attempts: number;
    readonly baseMs: number;
    readonly maxBackoffMs: number;
    readonly budgetRatio: number;
  };
  /** `maxSeconds` bounds every cooldown, a vendor's explicit `Retry-After` included. */
  readonly cooldown: { readonly defaultSeconds: number; readonly maxSeconds: number };
}

export interface UpstreamConfig {
  readonly name: UpstreamName;
  readonly baseUrl: string;
  readonly token?: string;
  readonly username?: string;
  readonly password?: string;
  readonly ratePerSec: number;
  readonly burst: number;
  /** Total deadline of one call, retries included. */
  readonly timeoutMs: number;
  readonly connectTimeoutMs: number;
  readonly connections: number;
  /** Login step: assumed session lifetime (the vendor's sessions last a day). */
  readonly sessionTtlMs: number;
  /** Login step: a session is renewed this long before it would expire. */
  readonly sessionRefreshMarginMs: number;
  /** Login step: first pause after a failed login; doubles per failure up to `loginBackoffMaxMs`. */
  readonly loginBackoffMs: number;
  readonly loginBackoffMaxMs: number;
  readonly limits: UpstreamLimitsConfig;
  /** Served by the built-in fake upstream. */
  readonly sandbox: boolean;
}

export interface LinksConfig {
  /** HMAC key: ATRIUM_LINK_SECRET, or random per process when unset (`secretSource` says which). */
  readonly secret: string;
  readonly secretSource: 'configured' | 'random';
  readonly ttlSeconds: number;
  /** Base of absolute links (no trailing slash); undefined → links are root-relative (`/links/…`). */
  readonly publicUrl?: string;
}

export interface AtriumConfig {
  readonly port: number;
  readonly host: string;
  readonly redisUrl?: string;
  readonly redisPrefix: string;
  readonly consumersFile?: string;
  readonly sandboxMode: 'auto' | 'on' | 'off';
  readonly logLevel: string;
  /** Pretty, human-readable logs (NODE_ENV=development only). */
  readonly prettyLogs: boolean;
  /** Bearer token of `GET /metrics`; unset → the endpoint is open (keep it on an internal network). */
  readonly metricsToken?: string;
  readonly bodyLimitBytes: number;
  readonly maxResponseBytes: number;
  readonly defaultRetryAfterSeconds: number;
  readonly shutdownGraceMs: number;
  readonly cache: CacheConfig;
  /** Operator key of the admin API; undefined → the admin API answers 403. */
  readonly adminToken?: string;
  /** `POST /batch`: most items per call, and the default (and longest) overall deadline. */
  readonly batch: { readonly maxItems: number; readonly timeoutMs: number };
  /** How long browsers may cache a CORS preflight answer. */
  readonly corsMaxAgeSeconds: number;
  /** The operator console's key; undefined → the console is off. */
  readonly operatorToken?: string;
  /** Gateway-signed download links that replace vendor links carrying our credential. */
  readonly links: LinksConfig;
  /** Vendor usage per consumer, upstream and day (`/admin/usage`, `atrium_consumer_*` metrics). */
  readonly usageCounting: boolean;
  /** Addresses and CIDRs of proxies whose `X-Forwarded-For` is believed; empty → the socket's address. */
  readonly trustedProxies: readonly string[];
  /** Span export over OTLP/HTTP; undefined → traces are propagated but no span is recorded. */
  readonly tracing?: { readonly endpoint: string; readonly serviceName: string };
  readonly upstreams: Readonly<Record<UpstreamName, UpstreamConfig>>;
}

type Env = Record<string, string | undefined>;

function check<T extends object>(
  cls: new () => T,
  raw: Record<string, unknown>,
  nameOf: (p: string) => string,
): T {
  // Empty strings mean "unset", as in most deployment tools.
  const cleaned = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined && v !== ''));
  const value = plainToInstance(cls, cleaned);
  const errors = validateSync(value, { whitelist: false, skipMissingProperties: false });
  if (errors.length)
    // Names only, never values: a value may be a secret.
    throw new ConfigError('Invalid configuration: ' + errors.map((e) => nameOf(e.property)).join(', '));
  return value;
}

/**
 * Reads and validates the whole configuration. `sandboxed` lists upstreams served by the built-in fakes
 * (main.ts starts them and fills in their URLs and credentials before calling this).
 */
export function loadConfig(env: Env, sandboxed: readonly UpstreamName[] = []): AtriumConfig {
  const problems: string[] = [];
  let g: GatewayEnv | undefined;
  try {
    g = check(GatewayEnv, env, (p) => p);
  } catch (e) {
    problems.push((e as Error).message.replace('Invalid configuration: ', ''));
  }
  const upstreams = {} as Record<UpstreamName, UpstreamConfig>;
  for (const name of UPSTREAM_NAMES) {
    const prefix = `UPSTREAM_${name.toUpperCase()}_`;
    const raw: Record<string, unknown> = {};
    for (const k of Object.keys(env)) if (k.startsWith(prefix)) raw[k.slice(prefix.length)] = env[k];
    let u: UpstreamEnv;
    try {
      u = check(UpstreamEnv, raw, (p) => prefix + p);
    } catch (e) {
      problems.push((e as Error).message.replace('Invalid configuration: ', ''));
      continue;
    }
    if (!u.BASE_URL) {
      problems.push(
        `${prefix}BASE_URL (not set: every interface needs its vendor URL and key; ATRIUM_SANDBOX=on fakes all four)`,
      );
      continue;
    }
    const login = name === 'documents' || name === 'deals';
    if (!u.TOKEN && !(login && u.USERNAME && u.PASSWORD))
      problems.push(login ? `${prefix}TOKEN (or ${prefix}USERNAME and ${prefix}PASSWORD)` : `${prefix}TOKEN`);
    if ((u.USERNAME && !u.PASSWORD) || (!u.USERNAME && u.PASSWORD))
      problems.push(`${prefix}USERNAME and ${prefix}PASSWORD go together`);
    if (u.SESSION_REFRESH_MARGIN_MS >= u.SESSION_TTL_MS)
      problems.push(`${prefix}SESSION_REFRESH_MARGIN_MS (must be below ${prefix}SESSION_TTL_MS)`);
    if (u.LOGIN_BACKOFF_MS > u.LOGIN_BACKOFF_MAX_MS)
      problems.push(`${prefix}LOGIN_BACKOFF_MS (must not exceed ${prefix}LOGIN_BACKOFF_MAX_MS)`);
    const limits = limitsOf(u, g?.ATRIUM_DEFAULT_RETRY_AFTER_SECONDS ?? 30);
    if (limits.aimd.minRate > limits.aimd.maxRate)
      problems.push(`${prefix}AIMD_MIN_RATE (must not exceed ${prefix}AIMD_MAX_RATE)`);
    if (limits.cooldown.defaultSeconds > limits.cooldown.maxSeconds)
      problems.push(`${prefix}COOLDOWN_DEFAULT_SECONDS (must not exceed ${prefix}COOLDOWN_MAX_SECONDS)`);
    if (limits.retry.baseMs > limits.retry.maxBackoffMs)
      problems.push(`${prefix}RETRY_BASE_MS (must not exceed ${prefix}RETRY_MAX_BACKOFF_MS)`);
    upstreams[name] = {
      name,
      baseUrl: u.BASE_URL.replace(/\/+$/, ''),
      token: u.TOKEN,
      username: u.USERNAME,
      password: u.PASSWORD,
      ratePerSec: u.RATE_PER_SEC,
      burst: u.BURST,
      timeoutMs: u.TIMEOUT_MS,
      connectTimeoutMs: u.CONNECT_TIMEOUT_MS,
      connections: u.CONNECTIONS,
      sessionTtlMs: u.SESSION_TTL_MS,
      sessionRefreshMarginMs: u.SESSION_REFRESH_MARGIN_MS,
      loginBackoffMs: u.LOGIN_BACKOFF_MS,
      loginBackoffMaxMs: u.LOGIN_BACKOFF_MAX_MS,
      limits,
      sandbox: sandboxed.includes(name),
    };
  }
  const ttlOverrides = parseTtlOverrides(env.ATRIUM_CACHE_TTL_OVERRIDES);
  if (!ttlOverrides) problems.push('ATRIUM_CACHE_TTL_OVERRIDES (expected family=duration,…)');
  const trustedProxies = parseTrustedProxies(env.ATRIUM_TRUSTED_PROXIES);
  if (!trustedProxies) problems.push('ATRIUM_TRUSTED_PROXIES (expected addresses or CIDRs, comma-separated)');
  if (problems.length || !g || !ttlOverrides || !trustedProxies)
    throw new ConfigError('Invalid configuration: ' + problems.join(', '));
  return {
    port: g.PORT,
    host: g.HOST,
    redisUrl: g.REDIS_URL,
    redisPrefix: g.ATRIUM_REDIS_PREFIX,
    consumersFile: g.ATRIUM_CONSUMERS_FILE,
    sandboxMode: g.ATRIUM_SANDBOX as AtriumConfig['sandboxMode'],
    logLevel: g.LOG_LEVEL,
    prettyLogs: g.NODE_ENV === 'development',
    metricsToken: g.ATRIUM_METRICS_TOKEN,
    bodyLimitBytes: g.ATRIUM_BODY_LIMIT_BYTES,
    maxResponseBytes: g.ATRIUM_MAX_RESPONSE_BYTES,
    defaultRetryAfterSeconds: g.ATRIUM_DEFAULT_RETRY_AFTER_SECONDS,
    shutdownGraceMs: g.ATRIUM_SHUTDOWN_GRACE_MS,
    cache: {
      maxBytes: g.ATRIUM_CACHE_MAX_BYTES,
      maxEntryBytes: g.ATRIUM_CACHE_MAX_ENTRY_BYTES,
      ttlOverrides,
      staleWhileRevalidateMs: g.ATRIUM_CACHE_STALE_WHILE_REVALIDATE_MS,
      staleIfErrorMs: g.ATRIUM_CACHE_STALE_IF_ERROR_MS,
      negativeTtlMs: g.ATRIUM_CACHE_NEGATIVE_TTL_MS,
      coalesceLeaseMs: g.ATRIUM_CACHE_COALESCE_LEASE_MS,
      redisTimeoutMs: g.ATRIUM_CACHE_REDIS_TIMEOUT_MS,
    },
    adminToken: g.ATRIUM_ADMIN_TOKEN,
    batch: { maxItems: g.ATRIUM_BATCH_MAX_ITEMS, timeoutMs: g.ATRIUM_BATCH_TIMEOUT_MS },
    corsMaxAgeSeconds: g.ATRIUM_CORS_MAX_AGE_SECONDS,
    operatorToken: g.ATRIUM_OPERATOR_TOKEN,
    links: {
      // No default secret: a random one signs links that only this process accepts (README "Key custody").
      secret: g.ATRIUM_LINK_SECRET ?? randomBytes(32).toString('base64url'),
      secretSource: g.ATRIUM_LINK_SECRET ? 'configured' : 'random',
      ttlSeconds: g.ATRIUM_LINK_TTL_SECONDS,
      publicUrl: g.ATRIUM_PUBLIC_URL?.replace(/\/+$/, ''),
    },
    usageCounting: g.ATRIUM_USAGE === 'on',
    trustedProxies,
    tracing: g.OTEL_EXPORTER_OTLP_ENDPOINT
      ? { endpoint: g.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, ''), serviceName: g.OTEL_SERVICE_NAME }
      : undefined,
    upstreams,
  };
}

/**
 * `10.0.0.0/8, 192.168.1.7, ::1`: addresses or CIDRs (IPv4 or IPv6), for Fastify's `trustProxy`. Returns
 * undefined when an item is not one, so the caller can name the variable.
 */
export function parseTrustedProxies(text: string | undefined): string[] | undefined {
  const out: string[] = [];
  if (!text || !text.trim()) return out;
  for (const part of text.split(',')) {
    const item = part.trim();
    if (!item) continue;
    const slash = item.indexOf('/');
    const addr = slash === -1 ? item : item.slice(0, slash);
    const version = isIP(addr);
    if (version === 0) return undefined;
    if (slash !== -1) {
      const bits = item.slice(slash + 1);
      if (!/^\d{1,3}$/.test(bits) || Number(bits) > (version === 4 ? 32 : 128)) return undefined;
    }
    out.push(item);
  }
  return out;
}

/** Derived defaults: the learned rate moves between a tenth of the configured rate and the configured rate. */
function limitsOf(u: UpstreamEnv, defaultRetryAfterSeconds: number): UpstreamLimitsConfig {
  const maxRate = u.AIMD_MAX_RATE ?? u.RATE_PER_SEC;
  return {
    maxWaitMs: u.MAX_WAIT_MS,
    localShare: u.LOCAL_SHARE,
    aimd: {
      enabled: u.AIMD === 'on',
      minRate: u.AIMD_MIN_RATE ?? Math.min(maxRate, Math.max(0.01, u.RATE_PER_SEC / 10)),
      maxRate,
      decrease: u.AIMD_DECREASE,
      increasePerSec: u.AIMD_INCREASE_PER_SEC ?? Math.max(0.01, u.RATE_PER_SEC / 20),
    },
    breaker: {
      failureRatio: u.BREAKER_FAILURE_RATIO,
      minSample: u.BREAKER_MIN_SAMPLE,
      windowMs: u.BREAKER_WINDOW_MS,
      openMs: u.BREAKER_OPEN_MS,
    },
    retry: {
      attempts: u.RETRY_ATTEMPTS,
      baseMs: u.RETRY_BASE_MS,
      maxBackoffMs: u.RETRY_MAX_BACKOFF_MS,
      budgetRatio: u.RETRY_BUDGET_RATIO,
    },
    cooldown: {
      defaultSeconds: u.COOLDOWN_DEFAULT_SECONDS ?? defaultRetryAfterSeconds,
      // An explicit per-upstream default is checked against the cap; the gateway-wide one widens it.
      maxSeconds:
        u.COOLDOWN_DEFAULT_SECONDS === undefined
          ? Math.max(u.COOLDOWN_MAX_SECONDS, defaultRetryAfterSeconds)
          : u.COOLDOWN_MAX_SECONDS,
    },
  };
}

/** Upstreams with no base URL configured (all four → a bare start: `ATRIUM_SANDBOX=auto` fakes them). */
export function unconfiguredUpstreams(env: Env): UpstreamName[] {
  return UPSTREAM_NAMES.filter((n) => !env[`UPSTREAM_${n.toUpperCase()}_BASE_URL`]);
}

export const ATRIUM_CONFIG = Symbol('AtriumConfig');
