import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { eventually } from './eventually.js';
import { RedisServer } from './redis-server.js';

const run = promisify(execFile);

/** `redis-cli -p <port> <args>`: its output. */
export async function redisCli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args], {
    timeout: 10_000,
  });
  return stdout;
}

/**
 * A real Redis Cluster on loopback: `masters` masters with one replica each (six redis-servers by default,
 * each a RedisServer with `--cluster-enabled yes`), created by `redis-cli --cluster create`, ready once every
 * node reports `cluster_state:ok`. Node timeout 1 s so a killed master fails over in about two. stop() kills
 * every process and removes the nodes' files; call it in afterAll.
 */
export class RedisCluster {
  readonly nodes: RedisServer[] = [];
  private readonly dir = mkdtempSync(join(tmpdir(), 'atrium-cluster-'));

  constructor(private readonly masters = 3) {
    for (let i = 0; i < masters * 2; i++)
      this.nodes.push(
        new RedisServer({
          args: [
            '--cluster-enabled',
            'yes',
            '--cluster-config-file',
            join(this.dir, `nodes-${i}.conf`),
            '--cluster-node-timeout',
            '1000',
            '--dir',
            this.dir,
          ],
        }),
      );
  }

  /** `host:port,host:port,…` of every node (REDIS_CLUSTER_NODES). */
  get nodeList(): string {
    return this.nodes.map((n) => `127.0.0.1:${n.port}`).join(',');
  }

  async start(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.start()));
    await run(
      'redis-cli',
      [
        '--cluster',
        'create',
        ...this.nodes.map((n) => `127.0.0.1:${n.port}`),
        '--cluster-replicas',
        '1',
        '--cluster-yes',
      ],
      { timeout: 30_000 },
    );
    await this.waitHealthy();
  }

  /** Until every running node says `cluster_state:ok` and knows `masters` masters with slots. */
  async waitHealthy(timeoutMs = 20_000): Promise<void> {
    await eventually(
      async () => {
        for (const n of this.nodes.filter((x) => x.running)) {
          const info = await redisCli(n.port, 'cluster', 'info');
          if (!info.includes('cluster_state:ok')) return false;
          if (!info.includes(`cluster_size:${this.masters}`)) return false;
        }
        return true;
      },
      { timeoutMs, intervalMs: 100, what: 'the Redis Cluster reports cluster_state:ok' },
    );
  }

  /** The nodes that are masters now (by their own account). */
  async currentMasters(): Promise<RedisServer[]> {
    const out: RedisServer[] = [];
    for (const n of this.nodes.filter((x) => x.running))
      if ((await redisCli(n.port, 'role')).startsWith('master')) out.push(n);
    return out;
  }

  /** The master serving `key`'s slot, as a running node sees the cluster (`CLUSTER NODES`). */
  async masterOf(key: string): Promise<RedisServer> {
    const asked = this.nodes.find((n) => n.running)!;
    const slot = Number((await redisCli(asked.port, 'cluster', 'keyslot', key)).trim());
    // `<id> <ip:port@bus> <flags> <master> <ping> <pong> <epoch> <link> <slot or range>…`
    for (const line of (await redisCli(asked.port, 'cluster', 'nodes')).split('\n')) {
      const f = line.trim().split(' ');
      if (f.length < 9 || !f[2].split(',').includes('master') || f[2].includes('fail')) continue;
      const port = Number(f[1].split('@')[0].split(':')[1]);
      for (const range of f.slice(8)) {
        const [lo, hi = lo] = range.split('-').map(Number);
        if (slot >= lo && slot <= hi) {
          const node = this.nodes.find((n) => n.port === port);
          if (node) return node;
        }
      }
    }
    throw new Error(`no master found for slot ${slot}`);
  }

  async stop(): Promise<void> {
    await Promise.all(this.nodes.map((n) => n.stop()));
    rmSync(this.dir, { recursive: true, force: true });
  }
}
