import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, request } from 'undici';
import { FakeMacroUpstream } from '../../src/sandbox/macro/fake-macro.upstream.js';
import { eventually } from '../helpers/eventually.js';
import { testConsumer } from '../helpers/consumers.js';
import { describeRedis } from '../helpers/redis.js';
import { macroReplicaEnv, spawnGateway, type SpawnedGateway } from '../helpers/gateway.js';

/**
 * The balancer: round robin over the replicas whose readiness probe last answered 200 (probed every 100 ms,
 * as a load balancer or the endpoints controller follows readiness), keep-alive to each, no retries.
 */
class ReadinessBalancer {
  url = '';
  private server?: Server;
  private probe?: NodeJS.Timeout;
  private next = 0;
  private readonly agent = new Agent({ keepAliveTimeout: 10_000 });

  constructor(private readonly replicas: Array<{ gw: SpawnedGateway; ready: boolean }>) {}

  async start(): Promise<void> {
    this.probe = setInterval(() => {
      for (const r of this.replicas)
        void request(`${r.gw.url}/health/ready`, { dispatcher: this.agent, headersTimeout: 500 })
          .then(async (res) => {
            await res.body.dump();
            r.ready = res.statusCode === 200;
          })
          .catch(() => (r.ready = false));
    }, 100);
    this.server = createServer((req, res) => void this.forward(req, res));
    await new Promise<void>((resolve) => this.server!.listen(0, '127.0.0.1', resolve));
    const a = this.server.address();
    this.url = `http://127.0.0.1:${typeof a === 'object' && a ? a.port : 0}`;
  }

  private async forward(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const ready = this.replicas.filter((r) => r.ready);
    if (ready.length === 0) {
      res.writeHead(503).end('no ready replica');
      return;
    }
    const target = ready[this.next++ % ready.length];
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    try {
      const up = await request(`${target.gw.url}${req.url}`, {
        method: req.method as 'GET',
        headers: Object.fromEntries(
          Object.entries(req.headers).filter(([k]) => k !== 'host' && k !== 'connection'),
        ) as Record<string, string>,
        body: chunks.length ? Buffer.concat(chunks) : undefined,
        dispatcher: this.agent,
      });
      const body = Buffer.from(await up.body.arrayBuffer());
      res.writeHead(up.statusCode, { 'content-type': String(up.headers['content-type'] ?? 'text/plain') });
      res.end(body);
    } catch (e) {
      res.writeHead(502).end(`balancer: ${(e as Error).message}`);
    }
  }

  async close(): Promise<void> {
    clearInterval(this.probe);
    await new Promise<void>((resolve) => this.server?.close(() => resolve()) ?? resolve());
    await this.agent.close();
  }
}

/**
 * A rolling restart as Kubernetes does one (docs/operations.md "Rolling out a new version"): a loopback
 * balancer that follows readiness (round robin over the replicas whose /health/ready answers 200, probed
 * every 100 ms, no retries: what a replica fails, a consumer sees), three replicas sharing Redis, steady
 * reads and writes through it, and each replica in turn stopped with SIGTERM and replaced once the new one
 * is ready. Failed requests and duplicated vendor writes are counted.
 */
describeRedis('a rolling restart of three replicas under load', (redis) => {
  const TOKEN = 'sbx_macro_rolling_key_7e21';
  const DRAIN_MS = 700;
  const fake = new FakeMacroUpstream({ token: TOKEN });
  const app = testConsumer({ id: 'rolling-load', upstreams: new Set(['macro']), write: true });
  const dir = mkdtempSync(join(tmpdir(), 'atrium-rolling-'));
  let env: NodeJS.ProcessEnv;
  const replicas: Array<{ gw: SpawnedGateway; ready: boolean }> = [];
  const balancer = new ReadinessBalancer(replicas);

  beforeAll(async () => {
    await fake.start();
    env = macroReplicaEnv(
      { dir, consumers: [app.consumer], baseUrl: fake.url },
      {
        UPSTREAM_MACRO_TOKEN: TOKEN,
        UPSTREAM_MACRO_RATE_PER_SEC: '2000',
        UPSTREAM_MACRO_BURST: '2000',
        REDIS_URL: redis.url,
        ATRIUM_REDIS_PREFIX: redis.prefix,
        ATRIUM_LINK_SECRET: 'rolling-restart-link-secret-0123456789abcdef',
        ATRIUM_DRAIN_DELAY_MS: String(DRAIN_MS),
      },
    );
    const started = await Promise.all([0, 1, 2].map(() => spawnGateway(env, 40_000)));
    for (const gw of started) replicas.push({ gw, ready: false });
    await balancer.start();
  }, 120_000);

  afterAll(async () => {
    await balancer.close();
    await Promise.all(replicas.map((r) => r.gw.stop()));
    await fake.close();
    rmSync(dir, { recursive: true, force: true });
  });

  it('drops nothing and writes nothing twice', async () => {
    await eventually(() => replicas.every((r) => r.ready), { timeoutMs: 30_000, intervalMs: 20 });
    const results = { reads: 0, writes: 0, failed: [] as string[] };
    let stop = false;
    let n = 0;
    const loop = async () => {
      while (!stop) {
        const i = n++;
        const write = i % 5 === 0;
        const res = await request(
          `${balancer.url}${write ? '/macro/feeds' : `/macro/series/${310902320 + (i % 40)}/data?i=${i}`}`,
          {
            method: write ? 'POST' : 'GET',
            headers: {
              authorization: `Bearer ${app.key}`,
              ...(write ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
            },
            body: write ? `filter_id=FL-1&name=rolling-${i}` : undefined,
          },
        ).catch((e: Error) => ({ statusCode: 0, body: { text: async () => e.message } }));
        const text = await res.body.text();
        if (write) results.writes++;
        else results.reads++;
        if (res.statusCode >= 300)
          results.failed.push(`${write ? 'POST' : 'GET'} ${res.statusCode} ${text.slice(0, 120)}`);
      }
    };
    const loops = Array.from({ length: 6 }, loop);

    const stops: Array<{ code: number | null; ms: number }> = [];
    for (let k = 0; k < 3; k++) {
      const old = replicas[0];
      const t0 = Date.now();
      const exited = old.gw.stop();
      // The replacement starts while the old one drains (maxSurge 1, maxUnavailable 0).
      const next = { gw: await spawnGateway(env, 40_000), ready: false };
      replicas.push(next);
      stops.push({ code: await exited, ms: Date.now() - t0 });
      replicas.splice(replicas.indexOf(old), 1);
      await eventually(() => next.ready, { timeoutMs: 30_000, intervalMs: 20 });
    }
    stop = true;
    await Promise.all(loops);

    const names = fake.requests
      .filter((r) => r.method === 'POST')
      .map((r) => new URLSearchParams(r.body.toString()).get('name'));
    const duplicated = names.length - new Set(names).size;
    process.stdout.write(
      `rolling restart: ${results.reads} reads, ${results.writes} writes, ${results.failed.length} failed, ` +
        `${names.length} writes at the vendor, ${duplicated} duplicated; stops ` +
        stops.map((s) => `${s.ms} ms (exit ${s.code})`).join(', ') +
        '\n',
    );
    expect(results.failed).toEqual([]);
    expect(duplicated).toBe(0);
    expect(names.length).toBe(results.writes);
    expect(results.reads).toBeGreaterThan(200);
    for (const s of stops) expect(s.code).toBe(0);
  }, 180_000);
});
