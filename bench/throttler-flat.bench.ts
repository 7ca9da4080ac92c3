// Benchmark: server CPU µs per request of the inbound consumer throttle, one hot consumer, in 10 s slices
// over a long run. The O(1) fixed-window storage must stay flat (first vs last slice within 10 %); the
// stock in-memory storage keeps one timestamp per hit and filters the array on every request, so it gets
// slower as the window fills (shared/design/dependencies.md §6.11, §7).
//
//   npm run bench:throttle                       # 60 s per scenario (after 10 s warm-up): none, fixed, stock (+ redis if REDIS_URL)
//   npm run bench:throttle -- --seconds 30 --modes fixed,stock
//
// Each scenario is a separate server process running the production guards (ConsumerAuthGuard, then
// ConsumerThrottlerGuard with the storage under test) in front of a static controller; autocannon runs in
// this process (-c 50 -p 1). Server CPU is utime+stime from /proc/<pid>/stat (all threads).
import 'reflect-metadata';
import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Controller, Get, Module, type DynamicModule, type Provider } from '@nestjs/common';
import { APP_GUARD, NestFactory } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { ThrottlerModule, ThrottlerStorageService, type ThrottlerStorage } from '@nestjs/throttler';
import { Counter, Registry } from 'prom-client';
import { createAdapter, configureApp, NEST_APP_OPTIONS } from '../src/configure-app.js';
import { perSecondAndMinute, type Consumer } from '../src/core/auth/consumer.js';
import { CONSUMER_STORE, ConsumerAuthGuard } from '../src/core/auth/consumer-auth.guard.js';
import { ConsumerStore } from '../src/core/auth/consumer-store.service.js';
import { ErrorShapeRegistry } from '../src/core/errors/error-shape.registry.js';
import { GatewayExceptionFilter } from '../src/core/errors/gateway-exception.filter.js';
import { SecretRedactor } from '../src/core/logging/secret-redactor.js';
import { CONSUMER_THROTTLER_METRICS, ConsumerQuota } from '../src/core/throttling/consumer-quota.service.js';
import { ConsumerThrottlerGuard } from '../src/core/throttling/consumer-throttler.guard.js';
import { FixedWindowThrottlerStorage } from '../src/core/throttling/fixed-window.storage.js';
import { RedisFixedWindowThrottlerStorage } from '../src/core/throttling/redis-window.storage.js';
import { createRedisClient } from '../src/redis/redis.module.js';

type Mode = 'none' | 'fixed' | 'stock' | 'redis';
const MODES: readonly Mode[] = ['none', 'fixed', 'stock', 'redis'];

const HOT_KEY = 'atr_bench_hot_consumer_key_5c0ffee';
const SLICE_SECONDS = 10;
// Long enough for V8 to optimise the Nest/Fastify path; shorter warm-ups make the first slice look slow.
const WARMUP_SECONDS = 10;

/** One hot consumer with the usual two windows, limits high enough never to refuse. */
function hotConsumer(): Consumer {
  return {
    id: 'hot',
    keyHashes: [createHash('sha256').update(HOT_KEY).digest()],
    upstreams: new Set(['macro']),
    write: false,
    limits: perSecondAndMinute(10_000_000, 100_000_000),
    weight: 1,
    reservedShare: 0,
    corsOrigins: [],
  };
}

// ---------------------------------------------------------------------------------------------
// Server side

@Controller()
class PingController {
  @Get('ping')
  ping(): string {
    return 'pong';
  }
}

function storageFor(mode: Mode): ThrottlerStorage | undefined {
  if (mode === 'fixed') return new FixedWindowThrottlerStorage();
  if (mode === 'stock') return new ThrottlerStorageService();
  if (mode === 'redis') {
    const url = process.env.REDIS_URL;
    if (!url) throw new Error('redis mode needs REDIS_URL');
    return new RedisFixedWindowThrottlerStorage(createRedisClient(url), `atrium-bench:${process.pid}:`);
  }
  return undefined;
}

@Module({})
class BenchModule {
  static forMode(mode: Mode): DynamicModule {
    const storage = storageFor(mode);
    const registry = new Registry();
    const providers: Provider[] = [
      SecretRedactor,
      ErrorShapeRegistry,
      GatewayExceptionFilter,
      { provide: CONSUMER_STORE, useValue: new ConsumerStore([hotConsumer()]) },
      { provide: APP_GUARD, useClass: ConsumerAuthGuard },
    ];
    if (storage)
      providers.push(
        {
          provide: CONSUMER_THROTTLER_METRICS,
          useValue: {
            rateLimited: new Counter({
              name: 'atrium_rate_limited_total',
              help: 'bench',
              labelNames: ['upstream', 'kind'],
              registers: [registry],
            }),
          },
        },
        ConsumerQuota,
        ConsumerThrottlerGuard,
        { provide: APP_GUARD, useExisting: ConsumerThrottlerGuard },
      );
    return {
      module: BenchModule,
      imports: storage ? [ThrottlerModule.forRoot({ throttlers: [], storage })] : [],
      controllers: [PingController],
      providers,
    };
  }
}

async function serve(mode: Mode): Promise<void> {
  const app = await NestFactory.create<NestFastifyApplication>(
    BenchModule.forMode(mode),
    createAdapter({ bodyLimitBytes: 1024 * 1024 }),
    { ...NEST_APP_OPTIONS, logger: ['error'] },
  );
  configureApp(app);
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address();
  process.stdout.write(`LISTENING ${typeof address === 'object' && address ? address.port : 0}\n`);
}

// ---------------------------------------------------------------------------------------------
// Load side

interface AutocannonResult {
  requests: { total: number; average: number };
  latency: { p50: number; p99: number };
  errors: number;
  timeouts: number;
  non2xx: number;
}
type Autocannon = (opts: {
  url: string;
  connections: number;
  pipelining: number;
  duration: number;
  headers: Record<string, string>;
}) => Promise<AutocannonResult>;

// autocannon ships no types; its one call is typed here.
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const CLK_TCK = 100; // getconf CLK_TCK

function cpuSeconds(pid: number): number {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / CLK_TCK;
}

function startServer(mode: Mode): Promise<{ child: ChildProcess; port: number }> {
  const child = spawn(process.execPath, [fileURLToPath(import.meta.url), '--server', mode], {
    stdio: ['ignore', 'pipe', 'inherit'],
    env: process.env,
  });
  return new Promise((resolvePort, reject) => {
    let out = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /LISTENING (\d+)/.exec(out);
      if (m) resolvePort({ child, port: Number(m[1]) });
    });
    child.once('exit', (code) => reject(new Error(`bench server (${mode}) exited with ${code}`)));
  });
}

interface Slice {
  second: number;
  requests: number;
  reqPerSec: number;
  cpuUsPerReq: number;
  p50: number;
  p99: number;
}

async function measure(mode: Mode, seconds: number): Promise<Slice[]> {
  const { child, port } = await startServer(mode);
  const url = `http://127.0.0.1:${port}/ping`;
  const headers = { authorization: `Bearer ${HOT_KEY}` };
  const load = (duration: number) => autocannon({ url, connections: 50, pipelining: 1, duration, headers });
  try {
    await load(WARMUP_SECONDS);
    const slices: Slice[] = [];
    for (let s = 0; s < Math.ceil(seconds / SLICE_SECONDS); s++) {
      const before = cpuSeconds(child.pid!);
      const r = await load(SLICE_SECONDS);
      const cpu = cpuSeconds(child.pid!) - before;
      if (r.errors || r.timeouts || r.non2xx)
        throw new Error(`${mode}: ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx`);
      slices.push({
        second: (s + 1) * SLICE_SECONDS,
        requests: r.requests.total,
        reqPerSec: Math.round(r.requests.average),
        cpuUsPerReq: Math.round((cpu * 1e6) / r.requests.total),
        p50: r.latency.p50,
        p99: r.latency.p99,
      });
      process.stdout.write(
        `  ${mode.padEnd(5)} ${String(slices.at(-1)!.second).padStart(4)} s  ${String(slices.at(-1)!.cpuUsPerReq).padStart(5)} µs/req  ${String(slices.at(-1)!.reqPerSec).padStart(6)} req/s\n`,
      );
    }
    return slices;
  } finally {
    child.kill('SIGTERM');
  }
}

function argValue(name: string): string | undefined {
  const i = process.argv.indexOf(name);
  return i === -1 ? undefined : process.argv[i + 1];
}

async function main(): Promise<void> {
  const server = argValue('--server');
  if (server) return serve(server as Mode);
  const seconds = Number(argValue('--seconds') ?? 60);
  const wanted = (argValue('--modes') ?? `none,fixed,stock${process.env.REDIS_URL ? ',redis' : ''}`)
    .split(',')
    .filter((m): m is Mode => (MODES as readonly string[]).includes(m));
  const cpu = cpus()[0]?.model ?? 'unknown CPU';
  process.stdout.write(`throttler-flat: ${seconds} s per scenario, ${SLICE_SECONDS} s slices, ${cpu}\n`);
  const results: Record<string, { slices: Slice[]; firstToLast: number }> = {};
  for (const mode of wanted) {
    const slices = await measure(mode, seconds);
    const first = slices[0].cpuUsPerReq;
    const last = slices.at(-1)!.cpuUsPerReq;
    results[mode] = { slices, firstToLast: Math.round((last / first) * 100) / 100 };
  }
  const base = results.none?.slices;
  process.stdout.write(
    '\nscenario  first→last µs/req  last/first  the throttle alone (µs/req above "none", first→last)\n',
  );
  for (const [mode, r] of Object.entries(results)) {
    const f = r.slices[0].cpuUsPerReq;
    const l = r.slices.at(-1)!.cpuUsPerReq;
    const own =
      base && mode !== 'none' ? `${f - base[0].cpuUsPerReq} → ${l - base.at(-1)!.cpuUsPerReq}` : '–';
    const verdict = mode === 'none' ? '' : Math.abs(l / f - 1) <= 0.1 ? '  flat (within 10 %)' : '  NOT flat';
    process.stdout.write(
      `${mode.padEnd(9)} ${`${f} → ${l}`.padStart(16)}  ${r.firstToLast.toFixed(2).padStart(10)}  ${own}${verdict}\n`,
    );
  }
  const out = resolve(dirname(fileURLToPath(import.meta.url)), '../../../bench/results');
  mkdirSync(out, { recursive: true });
  const file = join(out, 'throttler-flat.json');
  writeFileSync(
    file,
    JSON.stringify(
      { date: new Date().toISOString(), cpu, seconds, sliceSeconds: SLICE_SECONDS, results },
      null,
      2,
    ) + '\n',
  );
  process.stdout.write(`\nwritten to ${file}\n`);
  const fixed = results.fixed;
  if (fixed && Math.abs(fixed.firstToLast - 1) > 0.1) process.exitCode = 1;
}

main().catch((e: unknown) => {
  process.stderr.write(`${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
  process.exit(1);
});
