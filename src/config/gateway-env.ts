import 'reflect-metadata';
import { Type } from 'class-transformer';
import { IsIn, IsInt, IsOptional, IsString, IsUrl, Max, Min, MinLength } from 'class-validator';

const DAY_MS = 24 * 60 * 60 * 1000;

/** Process-wide settings. Secrets have no defaults. */
export class GatewayEnv {
  @Type(() => Number) @IsInt() @Min(0) @Max(65535) PORT = 3000;
  @IsString() HOST = '0.0.0.0';
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['redis', 'rediss'], require_protocol: true })
  REDIS_URL?: string;
  /** Prefix of every Redis key this gateway fleet writes (tests use a unique one each). */
  @IsString() @MinLength(1) ATRIUM_REDIS_PREFIX = 'atrium:';
  @IsOptional() @IsString() @MinLength(1) ATRIUM_CONSUMERS_FILE?: string;
  @IsIn(['auto', 'on', 'off']) ATRIUM_SANDBOX = 'auto';
  /** `1`: an unknown ATRIUM_* / UPSTREAM_* variable stops the boot (else it is a warning). */
  @IsIn(['0', '1']) ATRIUM_CONFIG_STRICT = '0';
  /** The interfaces this deployment serves, comma-separated (`macro,company`); unset → those with a base URL. */
  @IsOptional() @IsString() ATRIUM_UPSTREAMS?: string;
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
  /** After SIGTERM: unready at once, still serving this long (a typical preStop), then draining. */
  @Type(() => Number) @IsInt() @Min(0) @Max(120_000) ATRIUM_DRAIN_DELAY_MS = 5_000;
  // Response cache. Durations in ms.
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
  /** Deprecated name of ATRIUM_OPERATOR_TOKEN (still read, with a warning at boot). */
  @IsOptional() @IsString() @MinLength(16) ATRIUM_ADMIN_TOKEN?: string;
  // Front end and operators (batch, CORS, console).
  @Type(() => Number) @IsInt() @Min(1) @Max(100) ATRIUM_BATCH_MAX_ITEMS = 20;
  @Type(() => Number) @IsInt() @Min(100) @Max(120_000) ATRIUM_BATCH_TIMEOUT_MS = 10_000;
  @Type(() => Number) @IsInt() @Min(0) @Max(86_400) ATRIUM_CORS_MAX_AGE_SECONDS = 600;
  // Composite views (src/views): the views file (`none`: no views), the default and the longest deadline.
  @IsOptional() @IsString() @MinLength(1) ATRIUM_VIEWS_FILE?: string;
  @Type(() => Number) @IsInt() @Min(1) @Max(120_000) ATRIUM_VIEWS_TIMEOUT_MS = 5_000;
  @Type(() => Number) @IsInt() @Min(1) @Max(120_000) ATRIUM_VIEWS_MAX_TIMEOUT_MS = 30_000;
  // Watches (src/watch, `GET /watch`): caps, heartbeats, the fleet's poll lease, the shortest poll interval.
  @Type(() => Number) @IsInt() @Min(1) @Max(10_000) ATRIUM_WATCH_MAX_PATHS_PER_CONSUMER = 100;
  @Type(() => Number) @IsInt() @Min(1) @Max(1_000_000) ATRIUM_WATCH_MAX_STREAMS = 10_000;
  @Type(() => Number) @IsInt() @Min(50) @Max(300_000) ATRIUM_WATCH_HEARTBEAT_MS = 15_000;
  @Type(() => Number) @IsInt() @Min(100) @Max(600_000) ATRIUM_WATCH_LEASE_MS = 10_000;
  @Type(() => Number) @IsInt() @Min(10) @Max(86_400_000) ATRIUM_WATCH_MIN_INTERVAL_MS = 5_000;
  // Watched resources with a release schedule: polls around a release, the margin around it, polls between.
  @Type(() => Number) @IsInt() @Min(10) @Max(86_400_000) ATRIUM_WATCH_RELEASE_INTERVAL_MS = 10_000;
  @Type(() => Number) @IsInt() @Min(0) @Max(86_400_000) ATRIUM_WATCH_RELEASE_MARGIN_MS = 300_000;
  @Type(() => Number) @IsInt() @Min(10) @Max(604_800_000) ATRIUM_WATCH_RELEASE_QUIET_MS = 3_600_000;
  /** The operator token of the console and the admin API. Secret: no default. Unset → both are off. */
  @IsOptional() @IsString() @MinLength(16) ATRIUM_OPERATOR_TOKEN?: string;
  // Gateway-signed download links (README "Key custody").
  /** HMAC key of signed links (secret: no default; unset → a random one per process). */
  @IsOptional() @IsString() @MinLength(32) ATRIUM_LINK_SECRET?: string;
  @Type(() => Number) @IsInt() @Min(60) @Max(7 * 86_400) ATRIUM_LINK_TTL_SECONDS = 3_600;
  /** Where consumers reach the gateway, for absolute signed links; unset → root-relative links. */
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  ATRIUM_PUBLIC_URL?: string;
  // Operators: usage counting, tracing, client addresses.
  @IsIn(['on', 'off']) ATRIUM_USAGE = 'on';
  /** Proxies whose `X-Forwarded-For` is believed: comma-separated addresses or CIDRs (Fastify's trustProxy). */
  @IsOptional() @IsString() ATRIUM_TRUSTED_PROXIES?: string;
  /** OTLP/HTTP collector (the OpenTelemetry variable); unset → no span is recorded or exported. */
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['http', 'https'], require_protocol: true })
  OTEL_EXPORTER_OTLP_ENDPOINT?: string;
  @IsString() @MinLength(1) OTEL_SERVICE_NAME = 'atrium';
  /** More resource attributes of the exported spans (`deployment.environment=prod,k8s.pod.name=…`). */
  @IsOptional() @IsString() OTEL_RESOURCE_ATTRIBUTES?: string;
  // State (docs/operations.md "State"): PostgreSQL holds consumers, keys, the audit trail and usage.
  /** `postgres://user:password@host:5432/db` (a secret: no default); unset → the consumers file is the source. */
  @IsOptional()
  @IsUrl({ require_tld: false, protocols: ['postgres', 'postgresql'], require_protocol: true })
  DATABASE_URL?: string;
  /** `boot`: pending migrations run at start (under node-pg-migrate's lock); `off`: `npm run db:migrate` only. */
  @IsIn(['boot', 'off']) ATRIUM_DATABASE_MIGRATE = 'boot';
  /** Usage rows kept in memory while the database is away; counts past this bound are dropped and counted. */
  @Type(() => Number) @IsInt() @Min(100) @Max(10_000_000) ATRIUM_USAGE_BUFFER_ROWS = 100_000;
  // Redis topology (docs/operations.md "State"): one server (REDIS_URL), Sentinel or Cluster, with auth and TLS.
  /** Sentinels, comma-separated `host:port`; with REDIS_SENTINEL_MASTER, instead of REDIS_URL. */
  @IsOptional() @IsString() @MinLength(3) REDIS_SENTINELS?: string;
  /** The master's name the sentinels monitor. */
  @IsOptional() @IsString() @MinLength(1) REDIS_SENTINEL_MASTER?: string;
  /** Cluster nodes to start from, comma-separated `host:port`; instead of REDIS_URL and REDIS_SENTINELS. */
  @IsOptional() @IsString() @MinLength(3) REDIS_CLUSTER_NODES?: string;
  /** ACL user of the Redis servers (Sentinel and Cluster modes; REDIS_URL carries its own). */
  @IsOptional() @IsString() @MinLength(1) REDIS_USERNAME?: string;
  /** Password of the Redis servers (Sentinel and Cluster modes; secret: no default). */
  @IsOptional() @IsString() @MinLength(1) REDIS_PASSWORD?: string;
  /** Password of the sentinels themselves, when they require one (secret: no default). */
  @IsOptional() @IsString() @MinLength(1) REDIS_SENTINEL_PASSWORD?: string;
  /** `on`: TLS to the servers (and the sentinels); REDIS_URL says it by `rediss://`. */
  @IsIn(['on', 'off']) REDIS_TLS = 'off';
  /** Longest wait for any one Redis command of the shared client: a dead Redis never holds a request long. */
  @Type(() => Number) @IsInt() @Min(10) @Max(10_000) ATRIUM_REDIS_COMMAND_TIMEOUT_MS = 100;
}
