import { randomBytes, randomUUID } from 'node:crypto';
import { check, ConfigError, problemsOf, type Env } from './env-check.js';
import { resolveSecretFiles, SecretFiles, secretNames } from './secret-files.js';
import { unknownVariables, variablesOf } from './unknown-variables.js';
import { GatewayEnv } from './gateway-env.js';
import { parseTrustedProxies } from './trusted-proxies.js';
import { parseTtlOverrides } from './ttl-overrides.js';
import {
  loadUpstreamConfig,
  servedUpstreams,
  upstreamVariables,
  type UpstreamConfig,
  type UpstreamConfigSpec,
} from './upstream-config.js';

// The config's entry point: what callers import lives here or is passed on from the files of its parts.
export { ConfigError } from './env-check.js';
export { SecretFiles, type LiveSecret } from './secret-files.js';
export { parseTtlOverrides } from './ttl-overrides.js';
export {
  listedUpstreams,
  servedUpstreams,
  unconfiguredUpstreams,
  type UpstreamConfig,
  type UpstreamConfigSpec,
  type UpstreamLimitsConfig,
} from './upstream-config.js';

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

/** Watches over Server-Sent Events (durations in ms). */
export interface WatchConfig {
  /** Paths one consumer may watch at once, over all its streams on every replica of the fleet. */
  readonly maxPathsPerConsumer: number;
  /** Streams a replica holds open at once. */
  readonly maxStreams: number;
  /** A comment line this often keeps proxies from closing an idle stream. */
  readonly heartbeatMs: number;
  /** The fleet's poll lease per resource (renewed at a third of it; a dead holder's lapses after it). */
  readonly leaseMs: number;
  /** The shortest poll interval, whatever a route's TTL. */
  readonly minIntervalMs: number;
  /** Polls of a resource whose interface publishes a release schedule (an upstream's `watchSchedule`). */
  readonly release: {
    /** The poll interval around a release (from `marginMs` before its window to `marginMs` after). */
    readonly intervalMs: number;
    /** How far around a release's window polls are frequent. */
    readonly marginMs: number;
    /** The poll interval between releases (never past the next release's window); the schedule is re-read as often. */
    readonly quietMs: number;
  };
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
  /** SIGTERM → unready at once, serving for this long before the server stops accepting. */
  readonly drainDelayMs: number;
  readonly cache: CacheConfig;
  /** `POST /batch`: most items per call, and the default (and longest) overall deadline. */
  readonly batch: { readonly maxItems: number; readonly timeoutMs: number };
  /** Composite views: the views file (undefined → config/views.yaml if present) and deadlines. */
  readonly views: { readonly file?: string; readonly timeoutMs: number; readonly maxTimeoutMs: number };
  /** `GET /watch` (src/watch): caps per consumer and replica, heartbeats, the poll lease, the poll floor. */
  readonly watch: WatchConfig;
  /** How long browsers may cache a CORS preflight answer. */
  readonly corsMaxAgeSeconds: number;
  /**
   * The one operator token (console and admin API); undefined → the console is off and the admin API
   * answers 403.
   */
  readonly operatorToken?: string;
  /** The variable it came from: the deprecated `ATRIUM_ADMIN_TOKEN` is logged as such at boot. */
  readonly operatorTokenFrom?: 'ATRIUM_OPERATOR_TOKEN' | 'ATRIUM_ADMIN_TOKEN';
  /** Gateway-signed download links that replace vendor links carrying our credential. */
  readonly links: LinksConfig;
  /** Vendor usage per consumer, upstream and day (`/admin/usage`, `atrium_consumer_*` metrics). */
  readonly usageCounting: boolean;
  /** Addresses and CIDRs of proxies whose `X-Forwarded-For` is believed; empty → the socket's address. */
  readonly trustedProxies: readonly string[];
  /** Span export over OTLP/HTTP; undefined → traces are propagated but no span is recorded. */
  readonly tracing?: {
    readonly endpoint: string;
    readonly serviceName: string;
    /**
     * The resource of every span: OTEL_RESOURCE_ATTRIBUTES, then `service.name` (OTEL_SERVICE_NAME) and
     * `service.instance.id` (one per process unless the attributes set it), so replicas can be told apart.
     */
    readonly resource: Readonly<Record<string, string>>;
  };
  /** The interfaces this deployment serves (ATRIUM_UPSTREAMS); the others answer 404 UPSTREAM_NOT_CONFIGURED. */
  readonly upstreams: Readonly<Record<string, UpstreamConfig>>;
  /** Unknown `ATRIUM_*`/`UPSTREAM_*` variables, with the nearest known name: logged at boot. */
  readonly warnings: readonly string[];
  /** The secrets read from `<NAME>_FILE`, kept current once main.ts starts watching them. */
  readonly secretFiles: SecretFiles;
  /** Redis (one server, Sentinel or Cluster); undefined → no Redis (state in the process). */
  readonly redis?: RedisConnectionConfig;
  /** PostgreSQL, the system of record of consumers and usage; undefined → the consumers file (or Redis). */
  readonly database?: DatabaseConfig;
}

/** How the fleet reaches Redis: one server by URL, the master a set of sentinels names, or a Cluster. */
export type RedisConnectionConfig = (
  | {
      readonly kind: 'url';
      readonly url: string;
      /** From REDIS_USERNAME / REDIS_PASSWORD (or their files) when the URL carries none. */
      readonly username?: string;
      readonly password?: string;
    }
  | {
      readonly kind: 'sentinel';
      readonly sentinels: ReadonlyArray<{ readonly host: string; readonly port: number }>;
      readonly master: string;
      readonly username?: string;
      readonly password?: string;
      readonly sentinelPassword?: string;
      readonly tls: boolean;
    }
  | {
      readonly kind: 'cluster';
      readonly nodes: ReadonlyArray<{ readonly host: string; readonly port: number }>;
      readonly username?: string;
      readonly password?: string;
      readonly tls: boolean;
    }
) & { readonly commandTimeoutMs: number };

/** `host:port,host:port`, or undefined when any part is not one. */
export function parseHostPorts(text: string): Array<{ host: string; port: number }> | undefined {
  const out: Array<{ host: string; port: number }> = [];
  for (const part of text.split(',').map((p) => p.trim())) {
    const m = /^([A-Za-z0-9.-]+|\[[0-9a-fA-F:]+\]):(\d{1,5})$/.exec(part);
    const port = m ? Number(m[2]) : 0;
    if (!m || port < 1 || port > 65535) return undefined;
    out.push({ host: m[1].replace(/^\[|\]$/g, ''), port });
  }
  return out.length ? out : undefined;
}

function redisConnection(g: GatewayEnv, problems: string[]): RedisConnectionConfig | undefined {
  const commandTimeoutMs = g.ATRIUM_REDIS_COMMAND_TIMEOUT_MS;
  if (g.REDIS_CLUSTER_NODES) {
    const nodes = parseHostPorts(g.REDIS_CLUSTER_NODES);
    if (!nodes) problems.push('REDIS_CLUSTER_NODES (expected host:port, comma-separated)');
    if (g.REDIS_URL) problems.push('REDIS_URL (set either REDIS_URL or REDIS_CLUSTER_NODES, not both)');
    if (g.REDIS_SENTINELS || g.REDIS_SENTINEL_MASTER)
      problems.push('REDIS_SENTINELS (set either REDIS_SENTINELS or REDIS_CLUSTER_NODES, not both)');
    if (!nodes) return undefined;
    return {
      kind: 'cluster',
      nodes,
      username: g.REDIS_USERNAME,
      password: g.REDIS_PASSWORD,
      tls: g.REDIS_TLS === 'on',
      commandTimeoutMs,
    };
  }
  if (g.REDIS_SENTINELS || g.REDIS_SENTINEL_MASTER) {
    const sentinels = g.REDIS_SENTINELS ? parseHostPorts(g.REDIS_SENTINELS) : undefined;
    if (!sentinels) problems.push('REDIS_SENTINELS (expected host:port, comma-separated)');
    if (!g.REDIS_SENTINEL_MASTER) problems.push('REDIS_SENTINEL_MASTER (required with REDIS_SENTINELS)');
    if (g.REDIS_URL) problems.push('REDIS_URL (set either REDIS_URL or REDIS_SENTINELS, not both)');
    if (!sentinels || !g.REDIS_SENTINEL_MASTER) return undefined;
    return {
      kind: 'sentinel',
      sentinels,
      master: g.REDIS_SENTINEL_MASTER,
      username: g.REDIS_USERNAME,
      password: g.REDIS_PASSWORD,
      sentinelPassword: g.REDIS_SENTINEL_PASSWORD,
      tls: g.REDIS_TLS === 'on',
      commandTimeoutMs,
    };
  }
  if (!g.REDIS_URL) return undefined;
  // The password may stay out of the URL (and come from REDIS_PASSWORD_FILE); never from both places.
  let inUrl: URL | undefined;
  try {
    inUrl = new URL(g.REDIS_URL);
  } catch {
    inUrl = undefined;
  }
  if (inUrl && (inUrl.password || inUrl.username) && (g.REDIS_PASSWORD || g.REDIS_USERNAME))
    problems.push('REDIS_PASSWORD (REDIS_URL carries credentials already: set them in one place)');
  return {
    kind: 'url',
    url: g.REDIS_URL,
    ...(g.REDIS_USERNAME ? { username: g.REDIS_USERNAME } : {}),
    ...(g.REDIS_PASSWORD ? { password: g.REDIS_PASSWORD } : {}),
    commandTimeoutMs,
  };
}

export interface DatabaseConfig {
  readonly url: string;
  /** Run pending migrations at boot, or leave them to `npm run db:migrate`. */
  readonly migrateAtBoot: boolean;
  /** Usage rows kept while the database is away. */
  readonly usageBufferRows: number;
}

/**
 * Reads and validates the whole configuration. `upstreams` are the upstreams' declared needs (main.ts passes
 * their definitions, src/upstreams/index.ts); `sandboxed` lists those served by the built-in fakes (main.ts
 * starts them and fills in their URLs and credentials before calling this).
 */
export function loadConfig(
  given: Env,
  upstreams: readonly UpstreamConfigSpec[],
  sandboxed: readonly string[] = [],
): AtriumConfig {
  const problems: string[] = [];
  // Secrets given as files are read first: every rule below sees their values.
  const files = resolveSecretFiles(given, secretNames(upstreams.map((u) => u.name)));
  problems.push(...files.problems);
  const env = files.env;
  const secretFiles = new SecretFiles(files.files, env);
  let g: GatewayEnv | undefined;
  try {
    g = check(GatewayEnv, env, (p) => p);
  } catch (e) {
    problems.push(problemsOf(e));
  }
  const warnings: string[] = [];
  const known = [
    ...variablesOf(GatewayEnv),
    ...secretNames(upstreams.map((u) => u.name)).map((n) => `${n}_FILE`),
    ...upstreams.flatMap((u) => upstreamVariables(u.name)),
  ];
  // A misspelt variable would otherwise be ignored without a word.
  const unknown = unknownVariables(given, known);
  if (given.ATRIUM_CONFIG_STRICT === '1') problems.push(...unknown);
  else warnings.push(...unknown);
  if (
    (g?.REDIS_URL || g?.REDIS_SENTINELS || g?.REDIS_CLUSTER_NODES) &&
    !g.ATRIUM_LINK_SECRET &&
    sandboxed.length === 0
  )
    // Replicas sharing Redis serve each other's links: each signing with its own random secret would refuse
    // about every other download behind a round-robin balancer.
    problems.push(
      'ATRIUM_LINK_SECRET (required with REDIS_URL, REDIS_SENTINELS or REDIS_CLUSTER_NODES: replicas sharing Redis must sign download links with one secret, 32+ characters)',
    );
  const configs: Record<string, UpstreamConfig> = {};
  const served = servedUpstreams(
    env,
    upstreams.map((u) => u.name),
    sandboxed,
    problems,
  );
  if (served.length === 0 && !problems.some((p) => p.startsWith('ATRIUM_UPSTREAMS')))
    problems.push(
      `ATRIUM_UPSTREAMS (no interface is served: set UPSTREAM_<NAME>_BASE_URL and its key for at least one of ${upstreams.map((u) => u.name).join(', ')}, or ATRIUM_SANDBOX=on)`,
    );
  for (const spec of upstreams) {
    // An interface not served is not read: its variables may be absent or stale.
    if (!served.includes(spec.name)) continue;
    const u = loadUpstreamConfig(spec, env, {
      defaultRetryAfterSeconds: g?.ATRIUM_DEFAULT_RETRY_AFTER_SECONDS ?? 30,
      sandbox: sandboxed.includes(spec.name),
      problems,
      secretFiles,
    });
    if (u) configs[spec.name] = u;
  }
  if (g?.ATRIUM_ADMIN_TOKEN && g.ATRIUM_OPERATOR_TOKEN && g.ATRIUM_ADMIN_TOKEN !== g.ATRIUM_OPERATOR_TOKEN)
    // One operator token: two different ones would leave an operator guessing which opens what.
    problems.push(
      'ATRIUM_ADMIN_TOKEN (deprecated; differs from ATRIUM_OPERATOR_TOKEN: set only ATRIUM_OPERATOR_TOKEN)',
    );
  const ttlOverrides = parseTtlOverrides(env.ATRIUM_CACHE_TTL_OVERRIDES);
  if (!ttlOverrides) problems.push('ATRIUM_CACHE_TTL_OVERRIDES (expected family=duration,…)');
  if (g && g.ATRIUM_VIEWS_TIMEOUT_MS > g.ATRIUM_VIEWS_MAX_TIMEOUT_MS)
    problems.push('ATRIUM_VIEWS_TIMEOUT_MS (must not exceed ATRIUM_VIEWS_MAX_TIMEOUT_MS)');
  const resourceAttributes = parseResourceAttributes(env.OTEL_RESOURCE_ATTRIBUTES);
  if (!resourceAttributes)
    problems.push(
      'OTEL_RESOURCE_ATTRIBUTES (expected key=value pairs, comma-separated, values percent-encoded)',
    );
  const trustedProxies = parseTrustedProxies(env.ATRIUM_TRUSTED_PROXIES);
  if (!trustedProxies) problems.push('ATRIUM_TRUSTED_PROXIES (expected addresses or CIDRs, comma-separated)');
  const redis = g ? redisConnection(g, problems) : undefined;
  if (problems.length || !g || !ttlOverrides || !trustedProxies || !resourceAttributes)
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
    drainDelayMs: g.ATRIUM_DRAIN_DELAY_MS,
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
    batch: { maxItems: g.ATRIUM_BATCH_MAX_ITEMS, timeoutMs: g.ATRIUM_BATCH_TIMEOUT_MS },
    views: {
      file: g.ATRIUM_VIEWS_FILE,
      timeoutMs: g.ATRIUM_VIEWS_TIMEOUT_MS,
      maxTimeoutMs: g.ATRIUM_VIEWS_MAX_TIMEOUT_MS,
    },
    watch: {
      maxPathsPerConsumer: g.ATRIUM_WATCH_MAX_PATHS_PER_CONSUMER,
      maxStreams: g.ATRIUM_WATCH_MAX_STREAMS,
      heartbeatMs: g.ATRIUM_WATCH_HEARTBEAT_MS,
      leaseMs: g.ATRIUM_WATCH_LEASE_MS,
      minIntervalMs: g.ATRIUM_WATCH_MIN_INTERVAL_MS,
      release: {
        intervalMs: g.ATRIUM_WATCH_RELEASE_INTERVAL_MS,
        marginMs: g.ATRIUM_WATCH_RELEASE_MARGIN_MS,
        quietMs: g.ATRIUM_WATCH_RELEASE_QUIET_MS,
      },
    },
    corsMaxAgeSeconds: g.ATRIUM_CORS_MAX_AGE_SECONDS,
    operatorToken: g.ATRIUM_OPERATOR_TOKEN ?? g.ATRIUM_ADMIN_TOKEN,
    operatorTokenFrom: g.ATRIUM_OPERATOR_TOKEN
      ? 'ATRIUM_OPERATOR_TOKEN'
      : g.ATRIUM_ADMIN_TOKEN
        ? 'ATRIUM_ADMIN_TOKEN'
        : undefined,
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
      ? {
          endpoint: g.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, ''),
          serviceName: g.OTEL_SERVICE_NAME,
          resource: {
            'service.instance.id': randomUUID(),
            ...resourceAttributes,
            'service.name': g.OTEL_SERVICE_NAME,
          },
        }
      : undefined,
    upstreams: configs,
    warnings,
    secretFiles,
    redis,
    database: g.DATABASE_URL
      ? {
          url: g.DATABASE_URL,
          migrateAtBoot: g.ATRIUM_DATABASE_MIGRATE === 'boot',
          usageBufferRows: g.ATRIUM_USAGE_BUFFER_ROWS,
        }
      : undefined,
  };
}

/**
 * OTEL_RESOURCE_ATTRIBUTES as the OpenTelemetry specification writes it: `key=value` pairs, comma-separated,
 * values percent-encoded; undefined when malformed. (The SDK's own envDetector reads process.env only; the
 * gateway reads its configuration from the env it is given.)
 */
export function parseResourceAttributes(raw: string | undefined): Record<string, string> | undefined {
  const out: Record<string, string> = {};
  if (!raw?.trim()) return out;
  for (const pair of raw.split(',')) {
    const at = pair.indexOf('=');
    const key = pair.slice(0, at).trim();
    if (at < 1 || !key) return undefined;
    try {
      out[key] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      return undefined;
    }
  }
  return out;
}

export const ATRIUM_CONFIG = Symbol('AtriumConfig');
