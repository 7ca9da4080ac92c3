#!/usr/bin/env node
// `npm run docs:config`: writes the settings tables of docs/configuration.md from the config classes in
// src/config (GatewayEnv, UpstreamEnv) and the upstream declarations listed in src/upstreams/index.ts: every
// variable, its default and what it accepts come from the source, read with the TypeScript compiler (no
// build needed); only the meaning of each is written here.
//   node scripts/docs-config.mjs            rewrite the block between the markers
//   node scripts/docs-config.mjs --check    exit 1 when the block is stale (the unit test runs this)
//   --doc <file>                            another Markdown file instead of docs/configuration.md
//   node scripts/docs-config.mjs --list     print every variable name as a JSON array (test/deploy reads it)
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const CONFIG_DIR = join(ROOT, 'src/config');
const UPSTREAMS_INDEX = join(ROOT, 'src/upstreams/index.ts');
export const START = '<!-- config:start (written by npm run docs:config from src/config; do not edit) -->';
export const END = '<!-- config:end -->';

/**
 * What each variable means, and a default in words where the source's is derived or absent. Keys of the
 * per-upstream class are its field names (`UPSTREAM_<NAME>_` is added). A variable of the classes without
 * an entry here, or an entry without a variable, stops the script.
 */
const GATEWAY = {
  PORT: { meaning: 'port the gateway listens on' },
  HOST: { meaning: 'address the gateway listens on' },
  REDIS_URL: {
    meaning: 'shared state for several replicas (`redis://host:6379`): cache, quotas, budget, cooldowns',
  },
  ATRIUM_REDIS_PREFIX: { meaning: 'prefix of every Redis key and channel of this fleet' },
  ATRIUM_CONSUMERS_FILE: {
    default: '– (required outside sandbox, unless `DATABASE_URL` is set)',
    meaning:
      'path of the consumers file ([below](#consumers-and-keys)); with a database it only seeds an empty one',
  },
  ATRIUM_SANDBOX: {
    meaning:
      '`auto`: built-in fakes for all four interfaces only when nothing is configured (no `UPSTREAM_*_BASE_URL`, no `ATRIUM_UPSTREAMS`, no consumers file); otherwise the interfaces served need their base URL and key, and the boot fails naming what is missing (fakes never mix with real vendors). `on`: fakes for those `ATRIUM_UPSTREAMS` lists (all four when unset), always; `off`: never',
  },
  ATRIUM_CONFIG_STRICT: {
    meaning:
      '`1`: an unknown `ATRIUM_*` or `UPSTREAM_*` variable stops the boot; `0`: it is a warning naming the nearest known variable',
  },
  ATRIUM_UPSTREAMS: {
    default: '– (the interfaces whose `UPSTREAM_<NAME>_BASE_URL` is set)',
    meaning:
      'the interfaces this deployment serves, comma-separated (`macro,company`); each needs its base URL and key, the others answer 404 `UPSTREAM_NOT_CONFIGURED` ([Serving only some interfaces](operations.md#serving-only-some-interfaces))',
  },
  LOG_LEVEL: { meaning: 'log level (per-request lines are `info`)' },
  NODE_ENV: {
    meaning: '`development`: human-readable logs (pino-pretty, a dev dependency); otherwise JSON lines',
  },
  ATRIUM_METRICS_TOKEN: {
    default: '– (`/metrics` open)',
    meaning: 'bearer token `GET /metrics` requires (secret)',
  },
  ATRIUM_BODY_LIMIT_BYTES: { meaning: 'largest request body' },
  ATRIUM_MAX_RESPONSE_BYTES: { meaning: 'largest buffered upstream answer (files stream without it)' },
  ATRIUM_DEFAULT_RETRY_AFTER_SECONDS: {
    meaning:
      'cooldown when an upstream 429 carries no reset header (per upstream: `UPSTREAM_<NAME>_COOLDOWN_DEFAULT_SECONDS`)',
  },
  ATRIUM_SHUTDOWN_GRACE_MS: {
    meaning: 'after the drain delay, how long in-flight requests may take before the process exits 1',
  },
  ATRIUM_DRAIN_DELAY_MS: {
    meaning:
      'after SIGTERM, how long the replica keeps serving with `/health/ready` failing (a typical `preStop`), before it stops accepting; exit within this plus `ATRIUM_SHUTDOWN_GRACE_MS` ([Rolling out a new version](operations.md#rolling-out-a-new-version))',
  },
  ATRIUM_CACHE_MAX_BYTES: { meaning: 'byte cap of the in-memory cache (LRU by bytes; `0` stores nothing)' },
  ATRIUM_CACHE_MAX_ENTRY_BYTES: { meaning: 'answers larger than this are served but not cached' },
  ATRIUM_CACHE_TTL_OVERRIDES: {
    accepts: '`family=duration,…` (units ms, s, m, h; at most 30 days)',
    meaning:
      'per-family TTLs, e.g. `feeds=10s,macro.layout=30m,dictionary=0` (`upstream.family` beats `family`; `0` turns caching off)',
  },
  ATRIUM_CACHE_STALE_WHILE_REVALIDATE_MS: {
    meaning: 'after the TTL: served stale while one background refresh runs',
  },
  ATRIUM_CACHE_STALE_IF_ERROR_MS: {
    meaning: 'after the TTL: served stale instead of a retryable upstream error',
  },
  ATRIUM_CACHE_NEGATIVE_TTL_MS: { meaning: 'how long an upstream 404 is cached (0 = not at all)' },
  ATRIUM_CACHE_COALESCE_LEASE_MS: {
    meaning: 'lease of the fleet-wide in-flight marker (renewed while the call runs)',
  },
  ATRIUM_CACHE_REDIS_TIMEOUT_MS: { meaning: 'timeout of every Redis round trip of the cache' },
  ATRIUM_ADMIN_TOKEN: {
    default: '–',
    meaning:
      '**deprecated** former name of `ATRIUM_OPERATOR_TOKEN`: still read (a warning at boot) when that one is unset; both set and different → the boot fails',
  },
  ATRIUM_BATCH_MAX_ITEMS: { meaning: 'most items in one `POST /batch`' },
  ATRIUM_BATCH_TIMEOUT_MS: { meaning: "a batch's default and longest overall deadline" },
  ATRIUM_VIEWS_FILE: {
    default: '`config/views.yaml` (if present)',
    meaning:
      'the composite views file (YAML or JSON, [Composite views](frontend.md#composite-views-get-viewsname)); `none`: no views. SIGHUP reloads it',
  },
  ATRIUM_VIEWS_TIMEOUT_MS: { meaning: "a view's deadline unless the view or the call sets one" },
  ATRIUM_VIEWS_MAX_TIMEOUT_MS: { meaning: 'the longest deadline a view or a call may ask for' },
  ATRIUM_WATCH_MAX_PATHS_PER_CONSUMER: {
    meaning:
      'paths one consumer may watch at once, over all its `GET /watch` streams on every replica (counted in Redis when there is one; past it: 429 `WATCH_LIMIT_REACHED`)',
  },
  ATRIUM_WATCH_MAX_STREAMS: {
    meaning: 'watch streams one replica holds open at once (past it: 503 `WATCH_STREAMS_FULL`)',
  },
  ATRIUM_WATCH_HEARTBEAT_MS: {
    meaning: 'a comment line this often keeps proxies from closing an idle watch stream',
  },
  ATRIUM_WATCH_LEASE_MS: {
    meaning:
      "the fleet's poll lease per watched resource (Redis): renewed at a third of it; a dead holder's polls are taken over after it",
  },
  ATRIUM_WATCH_MIN_INTERVAL_MS: {
    meaning:
      "the shortest poll interval of a watched resource (it polls at its route's cache TTL, never faster)",
  },
  ATRIUM_WATCH_RELEASE_INTERVAL_MS: {
    meaning:
      'the poll interval of a watched resource around a release, for interfaces that publish a release calendar (macro series: `/releases/series/{id}`)',
  },
  ATRIUM_WATCH_RELEASE_MARGIN_MS: {
    meaning:
      'how long before and after a release window watched resources are polled at the release interval',
  },
  ATRIUM_WATCH_RELEASE_QUIET_MS: {
    meaning:
      'the poll interval between releases (cut short when the next window opens); the release calendar is re-read as often',
  },
  ATRIUM_CORS_MAX_AGE_SECONDS: { meaning: 'how long browsers may cache a CORS preflight answer' },
  ATRIUM_OPERATOR_TOKEN: {
    default: '– (console and admin API off)',
    meaning: 'the one operator token: the console and the admin API `/admin/**` (secret)',
  },
  ATRIUM_LINK_SECRET: {
    default: '– (random per process)',
    meaning:
      'HMAC key of gateway-signed download links (secret); **set one shared value for a fleet** (see [Key custody](interfaces.md#key-custody))',
  },
  ATRIUM_LINK_TTL_SECONDS: { meaning: 'how long a signed download link may be followed' },
  ATRIUM_PUBLIC_URL: {
    default: '– (root-relative links)',
    meaning:
      "the gateway's address as consumers reach it, for absolute signed links (`https://atrium.internal`)",
  },
  ATRIUM_USAGE: {
    meaning:
      'vendor usage per consumer, upstream and day (`/admin/usage`, `atrium_consumer_*` metrics); `off` for side-by-side benchmarks',
  },
  ATRIUM_TRUSTED_PROXIES: {
    default: '– (the socket address)',
    meaning:
      'load balancers whose `X-Forwarded-For` is believed for the client address: addresses or CIDRs, comma-separated (`10.0.0.0/8,::1`)',
  },
  OTEL_EXPORTER_OTLP_ENDPOINT: {
    default: '– (no spans)',
    meaning:
      'OpenTelemetry collector, OTLP over HTTP (`http://otel-collector:4318`; spans go to `/v1/traces`); unset: trace context is still propagated, nothing recorded',
  },
  OTEL_SERVICE_NAME: { meaning: '`service.name` of the exported spans' },
  OTEL_RESOURCE_ATTRIBUTES: {
    meaning:
      'more resource attributes of the exported spans (`deployment.environment=prod,k8s.pod.name=…`, values percent-encoded); each replica adds a `service.instance.id` of its own unless this sets one',
  },
  DATABASE_URL: {
    default: '– (the consumers file is the source)',
    meaning:
      'PostgreSQL, the system of record (`postgres://user:password@host:5432/atrium`, secret): consumers, key digests, the audit trail and the usage ledger ([operations](operations.md#state))',
  },
  ATRIUM_DATABASE_MIGRATE: {
    meaning:
      '`boot`: pending migrations run at start (one replica at a time); `off`: only by `npm run db:migrate`',
  },
  REDIS_SENTINELS: {
    default: '– (one server: `REDIS_URL`)',
    meaning: 'Redis Sentinel instead of `REDIS_URL`: the sentinels, comma-separated `host:port`',
  },
  REDIS_SENTINEL_MASTER: {
    default: '–',
    meaning: 'the master name the sentinels monitor (with `REDIS_SENTINELS`)',
  },
  REDIS_CLUSTER_NODES: {
    default: '– (one server: `REDIS_URL`)',
    meaning:
      'Redis Cluster instead of `REDIS_URL`: nodes to discover it from, comma-separated `host:port` ([operations](operations.md#redis-cluster))',
  },
  REDIS_USERNAME: {
    default: '–',
    meaning: 'ACL user of the Redis servers (with `REDIS_URL`: when the URL carries none)',
  },
  REDIS_PASSWORD: {
    default: '–',
    meaning:
      'password of the Redis servers (secret; with `REDIS_URL`: when the URL carries none, so that it can come from `REDIS_PASSWORD_FILE`)',
  },
  REDIS_SENTINEL_PASSWORD: {
    default: '–',
    meaning: 'password of the sentinels, when they require one (secret)',
  },
  REDIS_TLS: {
    meaning:
      '`on`: TLS to the servers (and sentinels) in Sentinel and Cluster modes (`REDIS_URL` says it by `rediss://`)',
  },
  ATRIUM_REDIS_COMMAND_TIMEOUT_MS: {
    meaning:
      'longest wait for one command of the shared Redis client (the cache has its own, `ATRIUM_CACHE_REDIS_TIMEOUT_MS`)',
  },
  ATRIUM_USAGE_BUFFER_ROWS: {
    meaning:
      'usage rows kept in memory while the database is away (written when it is back); rows past it are dropped and counted in `atrium_usage_rows_dropped_total`',
  },
};

const UPSTREAM = {
  BASE_URL: { meaning: "the vendor's base URL" },
  TOKEN: { meaning: 'the vendor key (secret)' },
  USERNAME: { meaning: 'login step instead of a token (documents and deals only), with `…_PASSWORD`' },
  PASSWORD: { meaning: 'login step: the password (secret)' },
  RATE_PER_SEC: { meaning: 'the shared upstream budget: tokens per second' },
  BURST: { meaning: 'the shared upstream budget: bucket size' },
  TIMEOUT_MS: {
    meaning:
      'total deadline of one call, retries included (files: until the first bytes, then the longest pause between chunks)',
  },
  CONNECT_TIMEOUT_MS: { meaning: 'TCP/TLS connect timeout' },
  CONNECTIONS: { meaning: 'keep-alive pool size' },
  SESSION_TTL_MS: { meaning: 'login step: assumed session lifetime' },
  SESSION_REFRESH_MARGIN_MS: {
    meaning: 'login step: renew this long before the expiry (below `…_SESSION_TTL_MS`)',
  },
  LOGIN_BACKOFF_MS: { meaning: 'login step: pause after a failed login, doubling…' },
  LOGIN_BACKOFF_MAX_MS: { meaning: '…up to this' },
  MAX_WAIT_MS: { meaning: 'longest wait for an upstream token before 429 `UPSTREAM_RATE_LIMITED`' },
  LOCAL_SHARE: {
    meaning:
      'share of the budget one replica spends alone while Redis is down, until a heartbeat has counted the fleet (then the budget ÷ the replicas seen)',
  },
  AIMD: { meaning: 'learn the rate: lower it after an upstream 429, raise it while calls succeed' },
  AIMD_MIN_RATE: { default: 'rate/10', meaning: 'lower bound of the learned rate (requests per second)' },
  AIMD_MAX_RATE: { default: 'rate', meaning: 'upper bound of the learned rate (requests per second)' },
  AIMD_DECREASE: { meaning: 'multiplier of the rate after an upstream 429' },
  AIMD_INCREASE_PER_SEC: {
    default: 'rate/20',
    meaning: 'requests per second added per second of successful calls',
  },
  BREAKER_FAILURE_RATIO: {
    meaning: 'failure ratio (5xx, timeouts, connection errors) that opens the breaker…',
  },
  BREAKER_MIN_SAMPLE: { meaning: '…once the window holds this many calls' },
  BREAKER_WINDOW_MS: { meaning: "the breaker's rolling window" },
  BREAKER_OPEN_MS: { meaning: 'how long it stays open before one probe' },
  RETRY_ATTEMPTS: { meaning: 'attempts per idempotent GET, the first included (1 = no retries)' },
  RETRY_BASE_MS: { meaning: 'full-jitter exponential backoff: base…' },
  RETRY_MAX_BACKOFF_MS: { meaning: '…and longest pause' },
  RETRY_BUDGET_RATIO: { meaning: 'retries may add at most this share of recent calls' },
  COOLDOWN_DEFAULT_SECONDS: {
    default: '`ATRIUM_DEFAULT_RETRY_AFTER_SECONDS`',
    meaning: 'cooldown after a 429 without a usable reset header; doubles on repeats…',
  },
  COOLDOWN_MAX_SECONDS: {
    meaning:
      "…up to this; also the cap of a vendor's own `Retry-After`/reset header (never below the gateway-wide default)",
  },
};

/** Variables read outside the config classes (file, what it reads). */
const ELSEWHERE = {
  ATRIUM_DEMO_KEY: {
    file: 'src/gateway.ts',
    default: 'random',
    accepts: 'text',
    meaning: "the sandbox demo consumer's key",
  },
};

// ---------------------------------------------------------------------------------------------------------
// Reading the source

function sourceFiles(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? sourceFiles(join(dir, e.name)) : e.name.endsWith('.ts') ? [join(dir, e.name)] : [],
  );
}

const parsed = new Map();
function parse(file) {
  let sf = parsed.get(file);
  if (!sf) {
    sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.ES2022, true);
    parsed.set(file, sf);
  }
  return sf;
}

/** The value of a constant expression: literals, arithmetic, arrays and module-level constants (imports too). */
function evaluate(node, sf) {
  if (ts.isNumericLiteral(node)) return Number(node.text);
  if (ts.isStringLiteralLike(node)) return node.text;
  if (node.kind === ts.SyntaxKind.TrueKeyword) return true;
  if (node.kind === ts.SyntaxKind.FalseKeyword) return false;
  if (ts.isParenthesizedExpression(node) || ts.isAsExpression(node) || ts.isSatisfiesExpression?.(node))
    return evaluate(node.expression, sf);
  if (ts.isPrefixUnaryExpression(node) && node.operator === ts.SyntaxKind.MinusToken)
    return -evaluate(node.operand, sf);
  if (ts.isArrayLiteralExpression(node)) return node.elements.map((e) => evaluate(e, sf));
  if (ts.isObjectLiteralExpression(node))
    return Object.fromEntries(node.properties.map((p) => [p.name.getText(sf), evaluate(p.initializer, sf)]));
  if (ts.isBinaryExpression(node)) {
    const a = evaluate(node.left, sf);
    const b = evaluate(node.right, sf);
    switch (node.operatorToken.kind) {
      case ts.SyntaxKind.AsteriskToken:
        return a * b;
      case ts.SyntaxKind.PlusToken:
        return a + b;
      case ts.SyntaxKind.MinusToken:
        return a - b;
      case ts.SyntaxKind.SlashToken:
        return a / b;
    }
  }
  if (ts.isIdentifier(node)) return constant(node.text, sf);
  throw new Error(`cannot evaluate \`${node.getText(sf)}\` in ${relative(ROOT, sf.fileName)}`);
}

function constant(name, sf) {
  for (const st of sf.statements) {
    if (ts.isVariableStatement(st))
      for (const d of st.declarationList.declarations)
        if (ts.isIdentifier(d.name) && d.name.text === name && d.initializer)
          return evaluate(d.initializer, sf);
    if (
      ts.isImportDeclaration(st) &&
      st.importClause?.namedBindings &&
      ts.isNamedImports(st.importClause.namedBindings)
    ) {
      const spec = st.importClause.namedBindings.elements.find((e) => e.name.text === name);
      const from = st.moduleSpecifier.text;
      if (spec && from.startsWith('.')) {
        const file = resolve(dirname(sf.fileName), from.replace(/\.js$/, '.ts'));
        return constant((spec.propertyName ?? spec.name).text, parse(file));
      }
    }
  }
  throw new Error(`constant ${name} not found in ${relative(ROOT, sf.fileName)}`);
}

/** A class's properties in source order: name, default, optional, and its validation decorators. */
function classFields(className) {
  for (const file of sourceFiles(CONFIG_DIR)) {
    const sf = parse(file);
    for (const st of sf.statements) {
      if (!ts.isClassDeclaration(st) || st.name?.text !== className) continue;
      return st.members.filter(ts.isPropertyDeclaration).map((p) => {
        const decorators = {};
        for (const d of ts.getDecorators(p) ?? []) {
          const call = d.expression;
          if (!ts.isCallExpression(call)) continue;
          const name = call.expression.getText(sf);
          if (name === 'Type') continue;
          decorators[name] = call.arguments.map((a) => evaluate(a, sf));
        }
        return {
          name: p.name.getText(sf),
          optional: Boolean(p.questionToken),
          value: p.initializer ? evaluate(p.initializer, sf) : undefined,
          decorators,
        };
      });
    }
  }
  throw new Error(`class ${className} not found under src/config (update scripts/docs-config.mjs)`);
}

/** The statement that declares `name` in `sf`, following a relative import to the file it comes from. */
function declaration(name, sf) {
  for (const st of sf.statements) {
    if (ts.isVariableStatement(st))
      for (const d of st.declarationList.declarations)
        if (ts.isIdentifier(d.name) && d.name.text === name && d.initializer)
          return { node: d.initializer, sf };
    if (
      ts.isImportDeclaration(st) &&
      st.importClause?.namedBindings &&
      ts.isNamedImports(st.importClause.namedBindings)
    ) {
      const spec = st.importClause.namedBindings.elements.find((e) => e.name.text === name);
      const from = st.moduleSpecifier.text;
      if (spec && from.startsWith('.')) {
        const file = resolve(dirname(sf.fileName), from.replace(/\.js$/, '.ts'));
        return declaration((spec.propertyName ?? spec.name).text, parse(file));
      }
    }
  }
  throw new Error(`${name} not found in ${relative(ROOT, sf.fileName)} (update scripts/docs-config.mjs)`);
}

const unwrap = (node) =>
  ts.isAsExpression(node) || ts.isParenthesizedExpression(node) || ts.isSatisfiesExpression?.(node)
    ? unwrap(node.expression)
    : node;

/**
 * The upstream names, in order: `UPSTREAMS` of src/upstreams/index.ts lists the declarations, each a call
 * (`defineUpstream({ name: 'macro', … })`, `emisUpstream({ name: 'documents', … })`) whose object names it.
 */
export function upstreamNames() {
  const list = unwrap(declaration('UPSTREAMS', parse(UPSTREAMS_INDEX)).node);
  if (!ts.isArrayLiteralExpression(list))
    throw new Error('UPSTREAMS in src/upstreams/index.ts is not an array');
  return list.elements.map((e) => {
    const { node, sf } = declaration(e.getText(), parse(UPSTREAMS_INDEX));
    const call = unwrap(node);
    const object = ts.isCallExpression(call) ? unwrap(call.arguments[0]) : undefined;
    const prop =
      object &&
      ts.isObjectLiteralExpression(object) &&
      object.properties.find((p) => ts.isPropertyAssignment(p) && p.name.getText(sf) === 'name');
    if (!prop)
      throw new Error(
        `no literal name in the declaration of ${e.getText()} (update scripts/docs-config.mjs)`,
      );
    return evaluate(prop.initializer, sf);
  });
}

// ---------------------------------------------------------------------------------------------------------
// Writing the tables

const KIB = 1024;
function bytes(n) {
  for (const [unit, size] of [
    ['GiB', KIB ** 3],
    ['MiB', KIB ** 2],
    ['KiB', KIB],
  ])
    if (n >= size && n % size === 0) return `${n / size} ${unit}`;
  return String(n);
}

const show = (name, n) => (name.endsWith('_BYTES') ? bytes(n) : String(n));

function accepts(f) {
  const d = f.decorators;
  if (d.IsIn) return d.IsIn[0].map((v) => `\`${v}\``).join(', ');
  if (d.IsUrl)
    return `${(d.IsUrl[0]?.protocols ?? ['http', 'https']).map((p) => `\`${p}:\``).join(' or ')} URL`;
  const kind = d.IsInt ? 'whole number' : d.IsNumber || d.Min || d.Max ? 'number' : 'text';
  if (d.Min && d.Max) return `${kind}, ${show(f.name, d.Min[0])}–${show(f.name, d.Max[0])}`;
  if (d.MinLength)
    return d.MinLength[0] > 1 ? `${kind}, ${d.MinLength[0]}+ characters` : `${kind}, not empty`;
  return kind;
}

function defaultOf(f, meaning) {
  if (meaning.default) return meaning.default;
  if (f.value === undefined) return '–';
  return typeof f.value === 'string' ? `\`${f.value}\`` : show(f.name, f.value);
}

const cell = (s) => String(s).replace(/\|/g, '\\|');
const row = (cols) => `| ${cols.map(cell).join(' | ')} |`;

function table(fields, meanings, prefix, where) {
  const names = new Set(fields.map((f) => f.name));
  const undocumented = fields.filter((f) => !meanings[f.name]).map((f) => prefix + f.name);
  const unknown = Object.keys(meanings).filter((n) => !names.has(n));
  if (undocumented.length)
    throw new Error(`no meaning in scripts/docs-config.mjs for ${undocumented.join(', ')}`);
  if (unknown.length)
    throw new Error(`scripts/docs-config.mjs describes ${unknown.join(', ')}, which ${where} lacks`);
  return [
    row(['variable', 'default', 'accepts', 'meaning']),
    '|---|---|---|---|',
    ...fields.map((f) => {
      const m = meanings[f.name];
      return row([`\`${prefix}${f.name}\``, defaultOf(f, m), m.accepts ?? accepts(f), m.meaning]);
    }),
  ];
}

export function generate() {
  const names = upstreamNames();
  const gateway = classFields('GatewayEnv');
  const upstream = classFields('UpstreamEnv');
  for (const [name, x] of Object.entries(ELSEWHERE))
    if (!readFileSync(join(ROOT, x.file), 'utf8').includes(name))
      throw new Error(`${x.file} no longer reads ${name} (update ELSEWHERE in scripts/docs-config.mjs)`);
  return [
    START,
    '',
    '## Gateway settings',
    '',
    ...table(gateway, GATEWAY, '', 'GatewayEnv'),
    ...Object.entries(ELSEWHERE).map(([name, x]) =>
      row([`\`${name}\``, x.default, x.accepts, `${x.meaning} (read by \`${x.file}\`)`]),
    ),
    '',
    '## Per-upstream settings',
    '',
    `\`<NAME>\` is one of ${names.map((n) => `\`${n.toUpperCase()}\``).join(', ')}; every upstream has each of these.`,
    '"rate" is that upstream\'s `UPSTREAM_<NAME>_RATE_PER_SEC`.',
    '',
    ...table(upstream, UPSTREAM, 'UPSTREAM_<NAME>_', 'UpstreamEnv'),
    '',
    END,
  ].join('\n');
}

/** The file with its block replaced; throws when the markers are missing. */
export function rewrite(text, block) {
  const a = text.indexOf(START);
  const b = text.indexOf(END);
  if (a < 0 || b < a) throw new Error(`the markers ${START} … ${END} are missing`);
  return text.slice(0, a) + block + text.slice(b + END.length);
}

/**
 * Every variable the gateway reads, from the same source as the tables: the GatewayEnv fields, each
 * UpstreamEnv field for each upstream (`UPSTREAM_MACRO_TOKEN`), and the variables read elsewhere.
 */
export function variables() {
  const upstream = classFields('UpstreamEnv').map((f) => f.name);
  return [
    ...classFields('GatewayEnv').map((f) => f.name),
    ...Object.keys(ELSEWHERE),
    ...upstreamNames().flatMap((n) => upstream.map((f) => `UPSTREAM_${n.toUpperCase()}_${f}`)),
  ];
}

function main(argv) {
  if (argv.includes('--list')) {
    process.stdout.write(`${JSON.stringify(variables())}\n`);
    return 0;
  }
  const check = argv.includes('--check');
  const i = argv.indexOf('--doc');
  const doc = i >= 0 ? resolve(argv[i + 1]) : join(ROOT, 'docs/configuration.md');
  if (!existsSync(doc)) throw new Error(`${doc} does not exist`);
  const text = readFileSync(doc, 'utf8');
  const next = rewrite(text, generate());
  const name = relative(ROOT, doc);
  if (check) {
    if (next === text) return 0;
    process.stdout.write(`${name} is stale: run npm run docs:config and commit\n`);
    return 1;
  }
  if (next !== text) writeFileSync(doc, next);
  process.stdout.write(next === text ? `${name} is up to date\n` : `wrote ${name}\n`);
  return 0;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    process.exitCode = main(process.argv.slice(2));
  } catch (e) {
    process.stderr.write(`docs:config: ${e.message}\n`);
    process.exitCode = 2;
  }
}
