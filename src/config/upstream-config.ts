import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsNumber, IsOptional, IsString, IsUrl, Max, Min, MinLength } from 'class-validator';
import { RETRY_AFTER_CEILING_SECONDS } from './retry-after-ceiling.js';
import { check, problemsOf, type Env } from './env-check.js';
import type { LiveSecret, SecretFiles } from './secret-files.js';
import { variablesOf } from './unknown-variables.js';

/**
 * What an upstream declares of its configuration (its definition in `src/upstreams/<name>/`; main.ts passes
 * the list in: config imports no upstream). Each gets an `UPSTREAM_<NAME>_*` namespace.
 */
export interface UpstreamConfigSpec {
  /** `macro` → `UPSTREAM_MACRO_*`. */
  readonly name: string;
  readonly config: {
    /**
     * `token`: `UPSTREAM_<NAME>_TOKEN` is required. `token-or-login`: the upstream also has a login step,
     * so `USERNAME` and `PASSWORD` may stand in for the token.
     */
    readonly credentials: 'token' | 'token-or-login';
  };
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
  // The login step (upstreams declaring `token-or-login`): how long a session lives, how early it is renewed, and how a
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
  readonly name: string;
  readonly baseUrl: string;
  readonly token?: string;
  readonly username?: string;
  readonly password?: string;
  /** The key and the login password kept current from their files (`<NAME>_FILE`); absent → fixed values. */
  readonly tokenSecret?: LiveSecret;
  readonly passwordSecret?: LiveSecret;
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

/**
 * One upstream's settings from `UPSTREAM_<NAME>_*`, its rules checked; what is wrong goes to `problems` (by
 * variable name) and the result is undefined.
 */
export function loadUpstreamConfig(
  spec: UpstreamConfigSpec,
  env: Env,
  o: {
    readonly defaultRetryAfterSeconds: number;
    readonly sandbox: boolean;
    readonly problems: string[];
    readonly secretFiles?: SecretFiles;
  },
): UpstreamConfig | undefined {
  const { name } = spec;
  const { problems } = o;
  const prefix = envPrefixOf(name);
  const raw: Record<string, unknown> = {};
  for (const k of Object.keys(env))
    // `<FIELD>_FILE` was read into `<FIELD>` already (secret-files.ts).
    if (k.startsWith(prefix) && !k.endsWith('_FILE')) raw[k.slice(prefix.length)] = env[k];
  let u: UpstreamEnv;
  try {
    u = check(UpstreamEnv, raw, (p) => prefix + p);
  } catch (e) {
    problems.push(problemsOf(e));
    return undefined;
  }
  if (!u.BASE_URL) {
    problems.push(
      `${prefix}BASE_URL (not set: ATRIUM_UPSTREAMS lists ${name}, which needs its vendor URL and key; leave ${name} out of ATRIUM_UPSTREAMS to not serve it, or ATRIUM_SANDBOX=on to fake every interface)`,
    );
    return undefined;
  }
  const login = spec.config.credentials === 'token-or-login';
  if (!u.TOKEN && !(login && u.USERNAME && u.PASSWORD))
    problems.push(login ? `${prefix}TOKEN (or ${prefix}USERNAME and ${prefix}PASSWORD)` : `${prefix}TOKEN`);
  if ((u.USERNAME && !u.PASSWORD) || (!u.USERNAME && u.PASSWORD))
    problems.push(`${prefix}USERNAME and ${prefix}PASSWORD go together`);
  if (u.SESSION_REFRESH_MARGIN_MS >= u.SESSION_TTL_MS)
    problems.push(`${prefix}SESSION_REFRESH_MARGIN_MS (must be below ${prefix}SESSION_TTL_MS)`);
  if (u.LOGIN_BACKOFF_MS > u.LOGIN_BACKOFF_MAX_MS)
    problems.push(`${prefix}LOGIN_BACKOFF_MS (must not exceed ${prefix}LOGIN_BACKOFF_MAX_MS)`);
  const limits = limitsOf(u, o.defaultRetryAfterSeconds);
  if (limits.aimd.minRate > limits.aimd.maxRate)
    problems.push(`${prefix}AIMD_MIN_RATE (must not exceed ${prefix}AIMD_MAX_RATE)`);
  if (limits.cooldown.defaultSeconds > limits.cooldown.maxSeconds)
    problems.push(`${prefix}COOLDOWN_DEFAULT_SECONDS (must not exceed ${prefix}COOLDOWN_MAX_SECONDS)`);
  if (limits.retry.baseMs > limits.retry.maxBackoffMs)
    problems.push(`${prefix}RETRY_BASE_MS (must not exceed ${prefix}RETRY_MAX_BACKOFF_MS)`);
  return {
    name,
    baseUrl: u.BASE_URL.replace(/\/+$/, ''),
    token: u.TOKEN,
    username: u.USERNAME,
    password: u.PASSWORD,
    tokenSecret: o.secretFiles?.live(`${prefix}TOKEN`),
    passwordSecret: o.secretFiles?.live(`${prefix}PASSWORD`),
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
    sandbox: o.sandbox,
  };
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

/** Every `UPSTREAM_<NAME>_*` variable the gateway reads for an upstream (secrets' `_FILE` forms included). */
export function upstreamVariables(name: string): string[] {
  const prefix = envPrefixOf(name);
  return [
    ...variablesOf(UpstreamEnv).map((f) => prefix + f),
    ...['TOKEN', 'USERNAME', 'PASSWORD'].map((f) => `${prefix}${f}_FILE`),
  ];
}

function envPrefixOf(name: string): string {
  return `UPSTREAM_${name.toUpperCase()}_`;
}

/** Upstreams with no base URL configured (all of them → a bare start: `ATRIUM_SANDBOX=auto` fakes them). */
export function unconfiguredUpstreams(env: Env, upstreams: readonly UpstreamConfigSpec[]): string[] {
  return upstreams.map((u) => u.name).filter((n) => !env[`${envPrefixOf(n)}BASE_URL`]);
}

/**
 * The interfaces `ATRIUM_UPSTREAMS` lists (trimmed, lower-cased, in declaration order), undefined when it is
 * unset; names outside `known` go to `problems` with the rule.
 */
export function listedUpstreams(
  env: Env,
  known: readonly string[],
  problems: string[] = [],
): string[] | undefined {
  const raw = env.ATRIUM_UPSTREAMS?.trim();
  if (!raw) return undefined;
  const names = raw
    .split(',')
    .map((n) => n.trim().toLowerCase())
    .filter(Boolean);
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length || names.length === 0)
    problems.push(
      `ATRIUM_UPSTREAMS (${unknown.length ? `unknown interface ${unknown.map((n) => `"${n}"`).join(', ')}` : 'empty'}: expected a comma-separated list of ${known.join(', ')})`,
    );
  return known.filter((n) => names.includes(n));
}

/**
 * The interfaces this deployment serves: those ATRIUM_UPSTREAMS lists, or (unset) those whose base URL is
 * configured and those the sandbox plays.
 */
export function servedUpstreams(
  env: Env,
  known: readonly string[],
  sandboxed: readonly string[],
  problems: string[] = [],
): string[] {
  const listed = listedUpstreams(env, known, problems);
  if (listed) return listed;
  return known.filter((n) => sandboxed.includes(n) || Boolean(env[`${envPrefixOf(n)}BASE_URL`]));
}
