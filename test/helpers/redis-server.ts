import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { connect, createServer } from 'node:net';
import { join } from 'node:path';
import { eventually } from './eventually.js';

/** A port nothing listens on now (the OS's pick for port 0, released). */
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

/**
 * One PING to a Redis on loopback: true when it answers (PONG, or NOAUTH from a server with a password);
 * false on any failure or after 500 ms.
 */
export function pingRedis(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const s = connect(port, '127.0.0.1');
    const done = (ok: boolean) => {
      s.destroy();
      resolve(ok);
    };
    s.setTimeout(500, () => done(false));
    s.on('connect', () => s.write('PING\r\n'));
    s.on('data', (d: Buffer) => done(/^(\+PONG|-NOAUTH)/.test(d.toString())));
    s.on('error', () => done(false));
  });
}

export interface RedisServerOptions {
  /** More `redis-server` arguments (a Cluster node's settings, `--replicaof`, `--sentinel`). */
  readonly args?: readonly string[];
  /** A configuration file, read first (a sentinel needs one it can rewrite). */
  readonly config?: string;
}

/**
 * A private redis-server for tests that kill Redis: the machine's shared Redis (6379) is never touched.
 * No persistence, loopback only; kill() is a SIGKILL, start() brings it back on the same port (empty).
 */
export class RedisServer {
  private child?: ChildProcess;
  port = 0;

  /** Its working directory: a replica's full sync writes an RDB file there, never into the repository. */
  private readonly dir = mkdtempSync(join(tmpdir(), 'atrium-redis-'));

  constructor(private readonly options: RedisServerOptions = {}) {}

  get url(): string {
    return `redis://127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.child !== undefined && this.child.exitCode === null;
  }

  async start(): Promise<void> {
    if (this.port === 0) this.port = await freePort();
    const child = spawn(
      'redis-server',
      [
        ...(this.options.config ? [this.options.config] : []),
        '--port',
        String(this.port),
        '--bind',
        '127.0.0.1',
        '--save',
        '',
        '--appendonly',
        'no',
        '--loglevel',
        'warning',
        '--dir',
        this.dir,
        ...(this.options.args ?? []),
      ],
      { stdio: 'ignore' },
    );
    this.child = child;
    // Ready when it answers a PING (or gone: then say so rather than wait out the ceiling).
    await eventually(async () => child.exitCode !== null || (await pingRedis(this.port)), {
      intervalMs: 50,
      what: `redis-server on ${this.port} to answer PING`,
    });
    if (child.exitCode !== null)
      throw new Error(`redis-server on ${this.port} exited with ${child.exitCode}`);
  }

  /** A signal to the running server: SIGSTOP stalls it (connections stay open, nothing answers), SIGCONT resumes. */
  signal(signal: NodeJS.Signals): void {
    if (this.child?.exitCode === null) this.child.kill(signal);
  }

  /** SIGKILL: no shutdown, connections drop at once. */
  async kill(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null) return;
    const exited = new Promise<void>((r) => child.once('exit', () => r()));
    child.kill('SIGKILL');
    await exited;
  }

  /** The end: killed, and its directory removed. */
  async stop(): Promise<void> {
    await this.kill();
    rmSync(this.dir, { recursive: true, force: true });
  }
}
