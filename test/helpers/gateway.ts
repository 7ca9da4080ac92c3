import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { request as nodeRequest } from 'node:http';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import type { DynamicModule } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { request as undiciRequest, type Dispatcher } from 'undici';
import { AppModule } from '../../src/app.module.js';
import { loadConfig, type AtriumConfig } from '../../src/config/atrium-config.js';
import { configureApp, createAdapter, NEST_APP_OPTIONS } from '../../src/configure-app.js';
import { toRecord } from '../../src/core/auth/consumer-record.js';
import type { Consumer } from '../../src/core/auth/consumer.js';
import { createLogger } from '../../src/core/logging/logger.factory.js';
import { PinoNestLogger } from '../../src/core/logging/pino-nest.logger.js';
import { sandboxEnvFor, type GatewaySandbox } from '../../src/sandbox-env.js';
import { startSandbox } from '../../src/sandbox/start-sandbox.js';
import { UPSTREAM_NAMES, UPSTREAMS, type UpstreamName } from '../../src/upstreams/index.js';
import type { UpstreamDeclaration } from '../../src/upstreams/upstream-declaration.js';
import { recordEnvSecrets, teeSpawnedOutput } from '../observability/log-capture.js';
import type { TestConsumer } from './consumers.js';

// The one way to start a gateway under test, in two forms that take the same settings (gatewaySettings):
// in this process (startGateway: the real AppModule on the Fastify adapter) or as a child
// `node dist/main.js` (spawnGateway, consumers in a file); withGateway is the describe-block fixture over
// both, with the fakes; http and rawGet talk to either.

const ROOT = resolve(__dirname, '../..');

/** The link secret of test fleets sharing Redis that set none (the boot stops without one). */
export const TEST_LINK_SECRET = 'test-fleet-link-secret-0123456789abcdef';

const linkSecret = (env: Record<string, string | undefined>): Record<string, string> =>
  env.REDIS_URL && !env.ATRIUM_LINK_SECRET ? { ATRIUM_LINK_SECRET: TEST_LINK_SECRET } : {};

/**
 * The settings both forms start from: a free loopback port, every upstream a test does not point anywhere
 * at the discard port (configured, never called), the test fleets' link secret when Redis is shared, and
 * then the test's own settings over them.
 */
export function gatewaySettings(
  env: Record<string, string | undefined>,
  upstreamNames: readonly string[] = UPSTREAM_NAMES,
): Record<string, string | undefined> {
  const unused: Record<string, string> = {};
  for (const name of upstreamNames.map((n) => n.toUpperCase()))
    if (!env[`UPSTREAM_${name}_BASE_URL`]) {
      unused[`UPSTREAM_${name}_BASE_URL`] = 'http://127.0.0.1:9';
      unused[`UPSTREAM_${name}_TOKEN`] = 'unused-test-token';
    }
  return { PORT: '0', HOST: '127.0.0.1', ...unused, ...linkSecret(env), ...env };
}

// ---------------------------------------------------------------------------------------------------
// In this process

export interface GatewayHandle {
  app: NestFastifyApplication;
  url: string;
  close(): Promise<void>;
}

export interface StartGatewayOptions {
  /** Upstream env (`UPSTREAM_MACRO_BASE_URL`, …) and any other settings. */
  env: Record<string, string | undefined>;
  consumers: readonly Consumer[];
  /** Names whose settings point at the sandbox fakes. */
  sandboxed?: readonly string[];
  /** The upstream declarations (default the index's): a test's own upstream beside them. */
  upstreams?: readonly UpstreamDeclaration[];
  /** Modules beside the AppModule (an extra interface under test). */
  imports?: DynamicModule[];
  /** Changes the loaded config before the app is built (settings for an extra interface…). */
  adjustConfig?: (config: AtriumConfig) => AtriumConfig;
  /** The listener's accept backlog (Node's default 511 drops SYNs when 1,000 clients connect at once). */
  backlog?: number;
}

/**
 * Boots the real AppModule on the Fastify adapter on 127.0.0.1:0, exactly as main.ts does, so tests talk
 * HTTP to it like a client would.
 */
export async function startGateway(opts: StartGatewayOptions): Promise<GatewayHandle> {
  const upstreams = opts.upstreams ?? UPSTREAMS;
  recordEnvSecrets(opts.env);
  const loaded = loadConfig(
    gatewaySettings(
      opts.env,
      upstreams.map((u) => u.name),
    ),
    upstreams,
    opts.sandboxed ?? [],
  );
  const config = opts.adjustConfig ? opts.adjustConfig(loaded) : loaded;
  // As in main.ts: one pino logger for Nest and the request lines (under Jest it writes to the log capture).
  const logger = createLogger({ level: config.logLevel });
  const mod = await Test.createTestingModule({
    imports: [
      AppModule.forRoot({ config, consumers: opts.consumers, logger, upstreams }),
      ...(opts.imports ?? []),
    ],
  }).compile();
  const app = mod.createNestApplication<NestFastifyApplication>(createAdapter(config), {
    ...NEST_APP_OPTIONS,
    logger: new PinoNestLogger(logger),
  });
  configureApp(app);
  await app.listen({ port: 0, host: '127.0.0.1', backlog: opts.backlog });
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { app, url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

// ---------------------------------------------------------------------------------------------------
// As a child process

/** The tiers that spawn gateways build dist/ in their global setup (test/support/build.global-setup.ts). */
export function assertBuilt(): void {
  if (!existsSync(join(ROOT, 'dist/main.js')))
    throw new Error(
      'dist/main.js is missing: this tier builds it in its global setup (or run npm run build)',
    );
}

export interface SpawnedGateway {
  child: ChildProcess;
  url: string;
  output: () => string;
  stop(): Promise<number | null>;
}

/** Environment without anything that would configure the gateway, so a test states all it needs. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(UPSTREAM_|ATRIUM_|REDIS_URL$|PORT$|HOST$|LOG_LEVEL$)/.test(k)) env[k] = v;
  // No drain delay after SIGTERM unless a test asks for one (test/fleet/rolling-restart.fleet.spec.ts).
  return { ...env, ATRIUM_DRAIN_DELAY_MS: '0', ...linkSecret(extra), ...extra };
}

/** A consumers file for spawned gateways, keys as SHA-256 hex as in production. */
export function writeConsumersFile(dir: string, consumers: readonly Consumer[]): string {
  const path = join(dir, 'consumers.json');
  const doc = {
    consumers: consumers.map((c) => ({
      id: c.id,
      keyHashes: c.keyHashes.map((h) => h.toString('hex')),
      upstreams: [...c.upstreams],
      write: c.write,
      limits: c.limits,
      weight: c.weight,
      reservedShare: c.reservedShare,
      corsOrigins: c.corsOrigins,
      ...(c.tokens ? { oidc: toRecord(c).oidc } : {}),
    })),
  };
  writeFileSync(path, JSON.stringify(doc));
  return path;
}

/**
 * The child-process form of gatewaySettings: the same settings, sandbox off, these consumers in a file in
 * `dir`, over an environment cleared of anything that would configure the gateway.
 */
export function processSettings(o: {
  dir: string;
  consumers: readonly Consumer[];
  env: Record<string, string | undefined>;
}): NodeJS.ProcessEnv {
  const settings = gatewaySettings({
    ATRIUM_SANDBOX: 'off',
    ATRIUM_CONSUMERS_FILE: writeConsumersFile(o.dir, o.consumers),
    ...o.env,
  });
  return cleanEnv(
    Object.fromEntries(Object.entries(settings).filter((e): e is [string, string] => e[1] !== undefined)),
  );
}

/**
 * A replica serving only the macro interface from the fake at `baseUrl`, to these consumers (a file in
 * `dir`), on a free loopback port, sandbox off: a fleet test adds what it exercises.
 */
export function macroReplicaEnv(
  o: { dir: string; consumers: readonly Consumer[]; baseUrl: string },
  extra: Record<string, string>,
): NodeJS.ProcessEnv {
  return cleanEnv({
    PORT: '0',
    HOST: '127.0.0.1',
    ATRIUM_SANDBOX: 'off',
    ATRIUM_UPSTREAMS: 'macro',
    ATRIUM_CONSUMERS_FILE: writeConsumersFile(o.dir, o.consumers),
    UPSTREAM_MACRO_BASE_URL: o.baseUrl,
    ...extra,
  });
}

/** Starts `node dist/main.js` and waits until it prints its listening line. */
export function spawnGateway(env: NodeJS.ProcessEnv, timeoutMs = 20_000): Promise<SpawnedGateway> {
  assertBuilt();
  recordEnvSecrets(env);
  const child = spawn(process.execPath, ['--max-semi-space-size=4', 'dist/main.js'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  teeSpawnedOutput('gateway', child.stdout, child.stderr);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const stop = () =>
    new Promise<number | null>((res) => {
      if (child.exitCode !== null) return res(child.exitCode);
      child.once('exit', (code) => res(code));
      child.kill('SIGTERM');
    });
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gateway did not start in time; output:\n${out}`));
    }, timeoutMs);
    const onData = () => {
      const m = /listening on (?:port )?(http:\/\/[\d.]+:\d+|\d+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      const url = m[1].startsWith('http') ? m[1] : `http://127.0.0.1:${m[1]}`;
      resolveStart({ child, url, output: () => out, stop });
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code}; output:\n${out}`));
    });
  });
}

// ---------------------------------------------------------------------------------------------------
// The fixture

/** What the fixture needs of a fake upstream (every src/sandbox fake, or a test's own server). */
export interface FakeServer {
  start(): Promise<unknown>;
  close(): Promise<void>;
  readonly url: string;
  reset?(): void;
}

/** One upstream of the gateway under test: a fake started on port 0 and the settings that point at it. */
export interface UpstreamSetup<F extends FakeServer = FakeServer> {
  fake: F;
  /** UPSTREAM_<NAME>_TOKEN (the vendor key the gateway holds). */
  token?: string;
  /** UPSTREAM_<NAME>_USERNAME / _PASSWORD (EMIS interfaces that log in). */
  username?: string;
  password?: string;
}

type Upstreams = Partial<Record<UpstreamName, UpstreamSetup>>;
type FakesOf<U extends Upstreams> = { [K in keyof U]: U[K] extends UpstreamSetup<infer F> ? F : never };

export interface WithGatewayOptions<U extends Upstreams> {
  /** Fakes by upstream name; each gets UPSTREAM_<NAME>_BASE_URL (+ TOKEN, USERNAME, PASSWORD). */
  upstreams?: U;
  /**
   * Any other settings. A function is called in beforeAll, after the fakes listen, for settings that need
   * their URLs (or anything else known only then).
   */
  env?: Record<string, string | undefined> | ((fakes: FakesOf<U>) => Record<string, string | undefined>);
  /** The consumers; a function is called in beforeAll (consumers made in an earlier hook). */
  consumers?: ReadonlyArray<TestConsumer | Consumer> | (() => ReadonlyArray<TestConsumer | Consumer>);
  sandboxed?: UpstreamName[];
  /** 'process' spawns `node dist/main.js` (consumers go in a file); default in-process (startGateway). */
  mode?: 'in-process' | 'process';
  /** Gateways started with the same settings (a fleet sharing Redis); default 1. */
  instances?: number;
  /**
   * The built-in sandbox (src/sandbox/start-sandbox.ts) as `npm start` wires it: every upstream's fake with
   * fresh credentials, documents through the login step, every upstream marked sandboxed. Its fakes are not
   * reset between tests (`ctx.sandbox` gives them, and their credentials).
   */
  sandbox?: boolean;
  /** Other servers to start, reset and close with the fakes (a fake for an extra interface). */
  servers?: FakeServer[];
  /**
   * In-process only, passed to startGateway: extra modules (a function is called once the fakes listen),
   * a config adjustment, the accept backlog.
   */
  imports?: NonNullable<StartGatewayOptions['imports']> | (() => NonNullable<StartGatewayOptions['imports']>);
  adjustConfig?: StartGatewayOptions['adjustConfig'];
  backlog?: number;
  /** Calls reset() on every fake before each test (their recorded requests and scripted faults); default true. */
  resetFakes?: boolean;
  /** Start-up ceiling for each spawned gateway (spawnGateway's own default otherwise). */
  spawnTimeoutMs?: number;
  /** Ceiling for the beforeAll/afterAll hooks (Jest's default otherwise; spawned fleets need more). */
  hookTimeoutMs?: number;
}

export interface GatewayUnderTest<U extends Upstreams> {
  /** The first gateway's base URL (set in beforeAll). */
  url: string;
  /** Every gateway's base URL, in start order. */
  urls: string[];
  /** In-process handles (mode 'in-process'); `gw` is the first. */
  gw: GatewayHandle;
  gateways: GatewayHandle[];
  /** The first in-process gateway's Nest app (its providers: metrics registry, services…). */
  app: GatewayHandle['app'];
  /** Spawned processes (mode 'process'). */
  processes: SpawnedGateway[];
  /** The fakes by upstream name, started. */
  fakes: FakesOf<U>;
  /** The sandbox, when asked for. */
  sandbox: GatewaySandbox;
  /** The settings the gateways got (fake URLs included). */
  env: Record<string, string | undefined>;
  /** A GET (or any request) to the first gateway with `Authorization: Bearer <key>`; no key, no header. */
  request(path: string, key?: string, init?: Parameters<typeof http>[1]): Promise<HttpResult>;
  /** `request` bound to one consumer's key. */
  as(key: string): (path: string, init?: Parameters<typeof http>[1]) => Promise<HttpResult>;
}

const consumerOf = (c: TestConsumer | Consumer): Consumer => ('consumer' in c ? c.consumer : c);

/**
 * The one fixture for a gateway under test. Called inside a describe block, it registers beforeAll/afterAll:
 * start the fakes on port 0, point the gateway at them, start the gateway(s) in-process or as processes;
 * afterwards stop the gateways, then the fakes, then remove any temporary files. The returned object's
 * fields are filled in beforeAll, so read them inside tests and hooks only.
 */
export function withGateway<U extends Upstreams = Record<never, never>>(
  opts: WithGatewayOptions<U> = {},
): GatewayUnderTest<U> {
  const setups = Object.entries(opts.upstreams ?? {}) as Array<[UpstreamName, UpstreamSetup]>;
  const fakes = Object.fromEntries(setups.map(([name, s]) => [name, s.fake])) as FakesOf<U>;
  const started: FakeServer[] = [];
  let tmp: string | undefined;

  const request = (path: string, key?: string, init: Parameters<typeof http>[1] = {}) =>
    http(ctx.url + path, {
      ...init,
      headers: { ...(key ? { authorization: `Bearer ${key}` } : {}), ...init.headers },
    });
  const ctx: GatewayUnderTest<U> = {
    url: '',
    urls: [],
    gw: undefined as unknown as GatewayHandle,
    gateways: [],
    app: undefined as unknown as GatewayHandle['app'],
    processes: [],
    fakes,
    sandbox: undefined as unknown as GatewaySandbox,
    env: {},
    request,
    as: (key) => (path, init) => request(path, key, init),
  };

  beforeAll(async () => {
    for (const server of [...setups.map(([, s]) => s.fake), ...(opts.servers ?? [])]) {
      await server.start();
      started.push(server);
    }
    const env: Record<string, string | undefined> = {};
    if (opts.sandbox) {
      const sandbox = (ctx.sandbox = await startSandbox(UPSTREAMS));
      Object.assign(env, sandboxEnvFor(sandbox, UPSTREAM_NAMES));
    }
    for (const [name, s] of setups) {
      const N = name.toUpperCase();
      env[`UPSTREAM_${N}_BASE_URL`] = s.fake.url;
      if (s.token !== undefined) env[`UPSTREAM_${N}_TOKEN`] = s.token;
      if (s.username !== undefined) env[`UPSTREAM_${N}_USERNAME`] = s.username;
      if (s.password !== undefined) env[`UPSTREAM_${N}_PASSWORD`] = s.password;
    }
    Object.assign(env, typeof opts.env === 'function' ? opts.env(fakes) : opts.env);
    ctx.env = env;
    const consumers = (typeof opts.consumers === 'function' ? opts.consumers() : (opts.consumers ?? [])).map(
      consumerOf,
    );
    const n = opts.instances ?? 1;
    if (opts.mode === 'process') {
      tmp = mkdtempSync(join(tmpdir(), 'atrium-gw-'));
      const procEnv = processSettings({ dir: tmp, consumers, env });
      // allSettled: a fleet member that fails to start must not leave the others running.
      const results = await Promise.allSettled(
        Array.from({ length: n }, () => spawnGateway(procEnv, opts.spawnTimeoutMs)),
      );
      ctx.processes = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      ctx.urls = ctx.processes.map((p) => p.url);
    } else {
      const { adjustConfig, backlog } = opts;
      const sandboxed = opts.sandboxed ?? (opts.sandbox ? [...UPSTREAM_NAMES] : undefined);
      const imports = typeof opts.imports === 'function' ? opts.imports() : opts.imports;
      const results = await Promise.allSettled(
        Array.from({ length: n }, () =>
          startGateway({ env, consumers, sandboxed, imports, adjustConfig, backlog }),
        ),
      );
      ctx.gateways = results.flatMap((r) => (r.status === 'fulfilled' ? [r.value] : []));
      const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
      if (failed) throw failed.reason;
      ctx.gw = ctx.gateways[0];
      ctx.app = ctx.gw.app;
      ctx.urls = ctx.gateways.map((g) => g.url);
    }
    ctx.url = ctx.urls[0];
  }, opts.hookTimeoutMs);

  if (opts.resetFakes ?? true)
    beforeEach(() => {
      for (const f of started) f.reset?.();
    });

  // Reverse order of start: gateways (they hold connections to the fakes), then fakes, then files.
  afterAll(async () => {
    await Promise.all([...ctx.gateways.map((g) => g.close()), ...ctx.processes.map((p) => p.stop())]);
    for (const f of started.reverse()) await f.close();
    await ctx.sandbox?.close();
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  }, opts.hookTimeoutMs);

  return ctx;
}

// ---------------------------------------------------------------------------------------------------
// Clients

export interface HttpResult {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: () => any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary bodies
}

/** A plain HTTP call, as a consumer would make it. */
export async function http(
  url: string,
  options: { method?: Dispatcher.HttpMethod; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<HttpResult> {
  const res = await undiciRequest(url, {
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
  });
  const text = await res.body.text();
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
  return { status: res.statusCode, headers, text, json: () => JSON.parse(text) };
}

/** A request whose path is sent byte for byte (no URL normalisation of `..` or `%2e%2e`). */
export function rawGet(
  base: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = nodeRequest({ host: hostname, port, path, method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        const h: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) h[k] = Array.isArray(v) ? v.join(', ') : String(v);
        resolve({ status: res.statusCode ?? 0, headers: h, text, json: () => JSON.parse(text) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}
