import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { request } from 'undici';
import { ROOT } from './options.js';

/** Every process the bench starts. Each server under test has its own upstream lane (see servers/upstream.ts). */
export const SERVER_IDS = [
  'upstream',
  'ceiling',
  'bare',
  'naive-hit',
  'naive-miss',
  'atrium-hit',
  'atrium-hit-plain',
  'atrium-view',
  'atrium-miss',
  'atrium-storm',
  'nginx-hit',
  'fleet-vendor',
  'fleet-atrium-1',
  'fleet-atrium-2',
  'fleet-atrium-3',
  'fleet-nginx-1',
  'fleet-nginx-2',
  'fleet-nginx-3',
] as const;
export type ServerId = (typeof SERVER_IDS)[number];

export const SERVER_LABELS: Record<ServerId, string> = {
  upstream: 'fake upstream (node:http, counts calls per lane)',
  ceiling: 'ceiling: bare node:http serving the body',
  bare: 'bare proxy: node:http + undici Pool',
  'naive-hit': 'naive Nest proxy (Express, @nestjs/axios, CacheInterceptor, ThrottlerGuard, ValidationPipe)',
  'naive-miss': 'naive Nest proxy, second process for the unique-key scenarios',
  'atrium-hit': 'Atrium full stack (node dist/main.js), the 2 KB hit scenario only',
  'atrium-hit-plain': 'Atrium full stack with usage counting off (ATRIUM_USAGE=off), hit scenario',
  'atrium-view': 'Atrium full stack, the view and 200 KB hit scenarios',
  'atrium-miss': 'Atrium full stack, miss and burst scenarios',
  'atrium-storm': 'Atrium full stack, upstream answering 429 (storm)',
  'nginx-hit': 'nginx proxy_cache (Debian nginx-light, one process), the 2 KB hit scenario; no auth',
  'fleet-vendor': 'fleet scenario: fake vendor with tens of ms latency, counts calls per fleet',
  'fleet-atrium-1': 'fleet scenario: Atrium replica 1 of 3, Redis shared',
  'fleet-atrium-2': 'fleet scenario: Atrium replica 2 of 3, Redis shared',
  'fleet-atrium-3': 'fleet scenario: Atrium replica 3 of 3, Redis shared',
  'fleet-nginx-1': 'fleet scenario: nginx node 1 of 3, proxy_cache, its own cache',
  'fleet-nginx-2': 'fleet scenario: nginx node 2 of 3, proxy_cache, its own cache',
  'fleet-nginx-3': 'fleet scenario: nginx node 3 of 3, proxy_cache, its own cache',
};

export interface ServerSpec {
  readonly id: ServerId;
  /** Node script, absolute. */
  readonly script: string;
  readonly env: NodeJS.ProcessEnv;
  /** Any HTTP answer on this path means the server is up. */
  readonly readyPath: string;
  readonly nodeArgs?: readonly string[];
  /** Working directory (the repository root unless set). */
  readonly cwd?: string;
}

export interface RunningServer {
  readonly id: ServerId;
  readonly pid: number;
  readonly port: number;
  readonly url: string;
  readonly logFile: string;
  stop(): Promise<void>;
}

/** A free loopback port (bound and released; the server binds it a moment later). */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const addr = s.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      s.close(() => resolve(port));
    });
  });
}

/** Environment without anything that would configure Atrium, so each server gets exactly what it states. */
export function baseEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(UPSTREAM_|ATRIUM_|REDIS_URL$|PORT$|HOST$|LOG_LEVEL$|BENCH_|FAKE_|NODE_OPTIONS$)/.test(k))
      env[k] = v;
  return env;
}

function tail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

export function waitForExit(child: ChildProcess, ms: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve(true);
  return new Promise((resolve) => {
    const t = setTimeout(() => resolve(false), ms);
    child.once('exit', () => {
      clearTimeout(t);
      resolve(true);
    });
  });
}

/**
 * Waits until a server process just started answers GET `readyUrl` (any status). Fails with the end of its
 * log when it exits first, and kills it when `timeoutMs` passes first.
 */
export async function untilAnswering(
  child: ChildProcess,
  readyUrl: string,
  o: { what: string; timeoutMs: number; stepMs: number; log: () => string },
): Promise<void> {
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    if (child.exitCode !== null || child.signalCode !== null)
      throw new Error(`${o.what} exited (${child.exitCode ?? child.signalCode}) while starting:\n${o.log()}`);
    try {
      const res = await request(readyUrl, { headersTimeout: 2000, bodyTimeout: 2000 });
      await res.body.dump();
      return;
    } catch {
      if (Date.now() > deadline) {
        child.kill('SIGKILL');
        throw new Error(`${o.what} did not answer within ${o.timeoutMs} ms:\n${o.log()}`);
      }
      await sleep(o.stepMs);
    }
  }
}

/**
 * Starts one server in its own process on 127.0.0.1, its output going to a log file (not through the
 * runner, which is also the load generator), and waits until it answers HTTP.
 */
export async function startServer(
  spec: ServerSpec,
  logDir: string,
  timeoutMs = 60_000,
): Promise<RunningServer> {
  const port = await freePort();
  const logFile = join(logDir, `${spec.id}.log`);
  const fd = openSync(logFile, 'a');
  const child = spawn(process.execPath, [...(spec.nodeArgs ?? []), spec.script], {
    cwd: spec.cwd ?? ROOT,
    env: { ...spec.env, PORT: String(port), HOST: '127.0.0.1' },
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  const url = `http://127.0.0.1:${port}`;
  await untilAnswering(child, url + spec.readyPath, {
    what: spec.id,
    timeoutMs,
    stepMs: 100,
    log: () => tail(logFile),
  });
  return {
    id: spec.id,
    pid: child.pid!,
    port,
    url,
    logFile,
    async stop() {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGTERM');
      if (!(await waitForExit(child, 15_000))) {
        child.kill('SIGKILL');
        await waitForExit(child, 5_000);
      }
    },
  };
}
