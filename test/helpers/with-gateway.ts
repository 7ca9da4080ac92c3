import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Consumer } from '../../src/core/auth/consumer.js';
import { sandboxEnvFor, type GatewaySandbox } from '../../src/sandbox-env.js';
import { startSandbox } from '../../src/sandbox/start-sandbox.js';
import { UPSTREAM_NAMES, UPSTREAMS, type UpstreamName } from '../../src/upstreams/index.js';
import type { TestConsumer } from './consumers.js';
import {
  http,
  startGateway,
  type GatewayHandle,
  type HttpResult,
  type StartGatewayOptions,
} from './gateway.js';
import { cleanEnv, spawnGateway, writeConsumersFile, type SpawnedGateway } from './processes.js';

export { writeConsumersFile };

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
      const defined = Object.fromEntries(
        Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined),
      );
      // As startGateway does in-process: upstreams a test does not use point at the discard port.
      const unused: Record<string, string> = {};
      for (const name of UPSTREAM_NAMES.map((n) => n.toUpperCase()))
        if (!defined[`UPSTREAM_${name}_BASE_URL`]) {
          unused[`UPSTREAM_${name}_BASE_URL`] = 'http://127.0.0.1:9';
          unused[`UPSTREAM_${name}_TOKEN`] = 'unused-test-token';
        }
      const procEnv = cleanEnv({
        PORT: '0',
        HOST: '127.0.0.1',
        ATRIUM_SANDBOX: 'off',
        ...unused,
        ATRIUM_CONSUMERS_FILE: writeConsumersFile(tmp, consumers),
        ...defined,
      });
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
