import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort, pingRedis } from '../../cache/cache-helpers.js';

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
    for (let i = 0; i < 100; i++) {
      if (await pingRedis(this.port)) return;
      if (child.exitCode !== null)
        throw new Error(`redis-server on ${this.port} exited with ${child.exitCode}`);
      await new Promise((r) => setTimeout(r, 50));
    }
    throw new Error(`redis-server on ${this.port} did not answer`);
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
