import 'reflect-metadata';
import { plainToInstance, Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Max, Min, MinLength, validateSync } from 'class-validator';

/** The upstream interfaces Atrium fronts; each has an `UPSTREAM_<NAME>_*` config namespace. */
export const UPSTREAM_NAMES = ['macro', 'company', 'documents', 'deals'] as const;
export type UpstreamName = (typeof UPSTREAM_NAMES)[number];

export class ConfigError extends Error {}

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
  /** Served by the built-in fake upstream. */
  readonly sandbox: boolean;
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
      problems.push(`${prefix}BASE_URL (not set; or run in sandbox mode)`);
      continue;
    }
    const login = name === 'documents' || name === 'deals';
    if (!u.TOKEN && !(login && u.USERNAME && u.PASSWORD))
      problems.push(login ? `${prefix}TOKEN (or ${prefix}USERNAME and ${prefix}PASSWORD)` : `${prefix}TOKEN`);
    if ((u.USERNAME && !u.PASSWORD) || (!u.USERNAME && u.PASSWORD))
      problems.push(`${prefix}USERNAME and ${prefix}PASSWORD go together`);
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
      sandbox: sandboxed.includes(name),
    };
  }
  if (problems.length || !g) throw new ConfigError('Invalid configuration: ' + problems.join(', '));
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
    upstreams,
  };
}

/** Upstreams with no base URL configured: in sandbox mode these are served by the built-in fakes. */
export function unconfiguredUpstreams(env: Env): UpstreamName[] {
  return UPSTREAM_NAMES.filter((n) => !env[`UPSTREAM_${n.toUpperCase()}_BASE_URL`]);
}

export const ATRIUM_CONFIG = Symbol('AtriumConfig');
