import { spawn, type ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { connect, createServer } from 'node:net';
import { Pool } from 'undici';
import { eventually as sharedEventually } from '../helpers/eventually.js';

export interface BurstResult {
  status: number;
  cache: string | undefined;
  body: Buffer;
}

export interface BurstOptions {
  /**
   * Send in waves of this many requests, `waveGapMs` apart. A listener's accept backlog (511 in Node) drops
   * SYNs when 1,000 connections open in the same instant, and the clients then wait for SYN retransmits
   * (1 s, 3 s, 7 s); waves keep every connect accepted at once while all requests are still in flight
   * together, as long as the upstream answers slower than the waves take.
   */
  waveSize?: number;
  waveGapMs?: number;
}

/**
 * Sends `n` identical GETs, each on its own connection (a Pool with n connections really opens them), spread
 * round-robin over `bases`, all in flight together.
 */
export async function burst(
  bases: readonly string[],
  path: string,
  n: number,
  headers: Record<string, string>,
  opts: BurstOptions = {},
): Promise<BurstResult[]> {
  const waveSize = opts.waveSize ?? n;
  const gap = opts.waveGapMs ?? 0;
  const per = Math.ceil(n / bases.length);
  const pools = bases.map((b) => new Pool(b, { connections: per, pipelining: 1, connectTimeout: 20_000 }));
  try {
    return await Promise.all(
      Array.from({ length: n }, async (_, i) => {
        const wave = Math.floor(i / waveSize);
        if (wave > 0) await new Promise((r) => setTimeout(r, wave * gap));
        const res = await pools[i % pools.length].request({ method: 'GET', path, headers });
        const body = Buffer.from(await res.body.arrayBuffer());
        const cache = res.headers['x-cache'];
        return { status: res.statusCode, cache: typeof cache === 'string' ? cache : undefined, body };
      }),
    );
  } finally {
    await Promise.all(pools.map((p) => p.close()));
  }
}

export function sha256Hex(b: Buffer): string {
  return createHash('sha256').update(b).digest('hex');
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

export interface OwnRedis {
  url: string;
  port: number;
  child: ChildProcess;
  /** Kills the server by its PID and waits for the exit. */
  kill(signal?: NodeJS.Signals): Promise<void>;
}

/** A redis-server of the test's own on `port` (no persistence), ready when it accepts a PING. */
export async function startRedis(port: number): Promise<OwnRedis> {
  const child = spawn(
    'redis-server',
    ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
    {
      stdio: 'ignore',
    },
  );
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  // Ready when it answers a PING (or gone: then say so rather than wait out the ceiling).
  try {
    await sharedEventually(async () => child.exitCode !== null || (await pingRedis(port)), {
      intervalMs: 50,
      what: 'redis-server to answer PING',
    });
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
  if (child.exitCode !== null) throw new Error(`redis-server exited with ${child.exitCode}`);
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    child,
    kill: async (signal = 'SIGKILL') => {
      if (child.exitCode === null && child.pid) process.kill(child.pid, signal);
      await exited;
    },
  };
}

/** One PING to a Redis on loopback; false on any failure or after 500 ms. */
export function pingRedis(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(500, () => done(false));
    s.on('connect', () => s.write('PING\r\n'));
    s.on('data', (d: Buffer) => done(d.toString().startsWith('+PONG')));
    s.on('error', () => done(false));
  });
}

/** The shared eventually() (test/helpers/eventually.ts) with this suite's positional bounds. */
export async function eventually(
  fn: () => Promise<boolean> | boolean,
  timeoutMs = 10_000,
  stepMs = 50,
): Promise<void> {
  await sharedEventually(fn, { timeoutMs, intervalMs: stepMs });
}
