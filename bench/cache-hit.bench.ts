// Cache-hit benchmark: a hit through the whole Atrium stack against a bare node:http server that
// returns the same bytes, measured in the same run, reported as ratios. Not a test: `npm run bench:cache`.
//
// Processes: the bare server, the macro fake upstream and Atrium each run in their own process; autocannon
// runs here, as a library. Server CPU per request comes from /proc/<pid>/stat (utime + stime), so the load
// generator's own CPU does not count. Method as in the design notes (dependencies.md §8): 3 s warm-up per
// scenario, then interleaved rounds, medians, 0 errors and 0 non-2xx required.
//
// Two cached routes are measured: one without a query DTO (most routes) and one with one (the gateway's
// ValidationPipe runs before the pipeline, hit or not). The bare server returns each route's exact bytes.
//
// Knobs (env): BENCH_ROUNDS (3), BENCH_DURATION_S (8), BENCH_WARMUP_S (3), BENCH_CONNECTIONS (50),
// BENCH_PATHS (comma-separated), BENCH_LOG_LEVEL (info), BENCH_OUT (bench/results/cache-hit.json).
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { cpus, loadavg, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

interface AutocannonResult {
  requests: { total: number; average: number };
  latency: { p50: number; p99: number };
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
}
type Autocannon = (opts: Record<string, unknown>) => Promise<AutocannonResult>;
const autocannon = createRequire(import.meta.url)('autocannon') as Autocannon;

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const ROUNDS = Number(process.env.BENCH_ROUNDS ?? 3);
const DURATION_S = Number(process.env.BENCH_DURATION_S ?? 8);
const WARMUP_S = Number(process.env.BENCH_WARMUP_S ?? 3);
const CONNECTIONS = Number(process.env.BENCH_CONNECTIONS ?? 50);
const PATHS = (
  process.env.BENCH_PATHS ?? '/macro/dictionary/units,/macro/layout/tables/TB1207?lang=en'
).split(',');
const OUT = process.env.BENCH_OUT ?? join(ROOT, 'bench/results/cache-hit.json');

const CLK_TCK = (() => {
  try {
    return Number(execFileSync('getconf', ['CLK_TCK']).toString().trim()) || 100;
  } catch {
    return 100;
  }
})();

/** utime + stime of a whole process, in seconds. */
function cpuSeconds(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(fields[11]) + Number(fields[12])) / CLK_TCK;
}

const children: ChildProcess[] = [];

/** Starts a node process and resolves with the first stdout line matching `ready`. */
function start(
  args: string[],
  env: NodeJS.ProcessEnv,
  ready: RegExp,
): Promise<{ child: ChildProcess; match: RegExpExecArray }> {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  children.push(child);
  let out = '';
  return new Promise((resolvePromise, reject) => {
    const timer = setTimeout(() => reject(new Error(`${args[0]} did not start:\n${out}`)), 30_000);
    const onData = (d: Buffer) => {
      out += d.toString();
      const m = ready.exec(out);
      if (!m) return;
      clearTimeout(timer);
      // Keep draining the pipes so the server never blocks on a full one; the text is dropped.
      out = '';
      child.stdout.off('data', onData);
      child.stdout.on('data', () => undefined);
      resolvePromise({ child, match: m });
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${args[0]} exited with ${code}:\n${out}`));
    });
  });
}

// Answers each benchmarked path with the bytes and content type Atrium answers it with.
const BARE_SERVER = `
const { createServer } = require('node:http');
const { readFileSync } = require('node:fs');
const routes = new Map(JSON.parse(readFileSync(process.argv[1], 'utf8')).map(([path, type, b64]) => [path, { type, body: Buffer.from(b64, 'base64') }]));
const server = createServer((req, res) => {
  const r = routes.get(req.url);
  if (!r) { res.writeHead(404); res.end(); return; }
  res.writeHead(200, { 'content-type': r.type, 'content-length': r.body.length });
  res.end(r.body);
});
server.keepAliveTimeout = 60000;
server.listen(0, '127.0.0.1', () => console.log('bare listening on ' + server.address().port));
`;

interface Scenario {
  name: string;
  url: string;
  pid: number;
  headers: Record<string, string>;
}

interface Sample {
  reqPerSec: number;
  cpuUsPerReq: number;
  p50: number;
  p99: number;
}

async function run(s: Scenario, seconds: number): Promise<Sample> {
  const before = cpuSeconds(s.pid);
  const r = await autocannon({
    url: s.url,
    connections: CONNECTIONS,
    pipelining: 1,
    duration: seconds,
    headers: s.headers,
  });
  const cpu = cpuSeconds(s.pid) - before;
  if (r.errors || r.timeouts || r.non2xx)
    throw new Error(`${s.name}: ${r.errors} errors, ${r.timeouts} timeouts, ${r.non2xx} non-2xx`);
  return {
    reqPerSec: r.requests.total / r.duration,
    cpuUsPerReq: (cpu * 1e6) / r.requests.total,
    p50: r.latency.p50,
    p99: r.latency.p99,
  };
}

/**
 * The cache stage alone, in this process: hits through the cache stage over the memory store
 * (key canonicalisation and hash, store lookup, answer), CPU µs per hit. Shows what the cache adds to a hit.
 */
async function stageOnly(): Promise<number> {
  const load = (rel: string) => import(pathToFileURL(join(ROOT, 'dist', rel)).href);
  const { cacheStage } = await load('proxy/stages/cache.stage.js');
  const { MemoryResponseStore } = await load('proxy/cache/memory-response.store.js');
  const { CacheMetrics } = await load('proxy/cache-metrics.js');
  const { compose } = await load('proxy/compose.js');
  const { Registry } = await import('prom-client');
  const route = {
    id: 'bench.get',
    method: 'GET',
    path: '/layout/tables/{id}',
    family: 'layout',
    cacheTtlMs: 3_600_000,
  };
  const store = new MemoryResponseStore({ maxBytes: 64 * 1024 * 1024 });
  const options = {
    upstream: 'bench',
    routes: [route],
    store,
    settings: {
      maxEntryBytes: 1 << 20,
      ttlOverrides: {},
      staleWhileRevalidateMs: 0,
      staleIfErrorMs: 0,
      negativeTtlMs: 0,
    },
    events: new CacheMetrics(new Registry()).forUpstream('bench'),
  };
  const body = Buffer.from('{"data":[]}');
  const handler = compose([cacheStage(options)], async () => ({
    status: 200,
    headers: { 'content-type': 'application/json' },
    body,
  }));
  const request = () => ({
    upstream: 'bench',
    route,
    method: 'GET',
    path: '/layout/tables/TB1207',
    query: [
      ['lang', 'en'],
      ['with_model_information', 'true'],
      ['token', 'atr_consumer_key'],
    ],
    headers: {},
    consumerId: 'c',
    requestId: 'r',
    format: 'json',
    lang: 'en',
    credentialId: 'token:0123456789ab',
    deadline: Date.now() + 10_000,
    noCache: false,
    weight: 1,
  });
  await handler(request());
  const perOp: number[] = [];
  for (let round = 0; round < 3; round++) {
    const n = 100_000;
    const before = process.cpuUsage();
    for (let i = 0; i < n; i++) if ((await handler(request())).cache !== 'HIT') throw new Error('not a hit');
    const used = process.cpuUsage(before);
    perOp.push((used.user + used.system) / n);
  }
  await store.close();
  return median(perOp);
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function main(): Promise<void> {
  const token = 'bench_' + randomBytes(12).toString('hex');
  const key = 'atr_bench_' + randomBytes(18).toString('base64url');

  const fake = await start(
    ['dist/fake-upstream.main.js', '--kind', 'macro', '--token', token],
    process.env,
    /^\{.*\}$/m,
  );
  const fakeInfo = JSON.parse(fake.match[0]) as { url: string };

  const dir = mkdtempSync(join(tmpdir(), 'atrium-bench-'));
  const consumersFile = join(dir, 'consumers.json');
  writeFileSync(
    consumersFile,
    JSON.stringify({
      consumers: [
        {
          id: 'bench',
          keyHashes: [createHash('sha256').update(key).digest('hex')],
          upstreams: ['macro'],
          // The inbound limit is configured so high it never trips: its cost is measured, not its effect.
          limits: [{ name: 'per-second', ttlMs: 1000, limit: 1_000_000_000 }],
        },
      ],
    }),
  );
  const env: NodeJS.ProcessEnv = {
    PATH: process.env.PATH,
    HOME: process.env.HOME,
    NODE_ENV: 'production',
    PORT: '0',
    HOST: '127.0.0.1',
    LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'info',
    ATRIUM_SANDBOX: 'off',
    ATRIUM_CONSUMERS_FILE: consumersFile,
    UPSTREAM_MACRO_BASE_URL: fakeInfo.url,
    UPSTREAM_MACRO_TOKEN: token,
  };
  for (const name of ['COMPANY', 'DOCUMENTS', 'DEALS']) {
    env[`UPSTREAM_${name}_BASE_URL`] = 'http://127.0.0.1:9';
    env[`UPSTREAM_${name}_TOKEN`] = 'unused-bench-token';
  }
  const atrium = await start(
    ['--max-semi-space-size=4', 'dist/main.js'],
    env,
    /listening on (?:port )?(?:http:\/\/[\d.]+:)?(\d+)/,
  );
  const atriumUrl = `http://127.0.0.1:${atrium.match[1]}`;
  const headers = { authorization: `Bearer ${key}` };

  // Fill the cache and check that each measured path really is a hit, byte-identical to the miss.
  const pages: Array<{ path: string; type: string; body: Buffer }> = [];
  for (const path of PATHS) {
    const miss = await fetch(atriumUrl + path, { headers });
    const body = Buffer.from(await miss.arrayBuffer());
    const hit = await fetch(atriumUrl + path, { headers });
    const hitBody = Buffer.from(await hit.arrayBuffer());
    if (miss.status !== 200 || hit.headers.get('x-cache') !== 'HIT' || !hitBody.equals(body))
      throw new Error(
        `${path}: expected a 200 then an identical HIT, got ${miss.status} / ${hit.headers.get('x-cache')}`,
      );
    pages.push({ path, type: hit.headers.get('content-type') ?? 'application/json', body });
  }

  const routesFile = join(dir, 'routes.json');
  writeFileSync(routesFile, JSON.stringify(pages.map((p) => [p.path, p.type, p.body.toString('base64')])));
  const bare = await start(
    ['-e', BARE_SERVER, routesFile],
    { PATH: process.env.PATH },
    /bare listening on (\d+)/,
  );
  const bareBase = `http://127.0.0.1:${bare.match[1]}`;
  const md5 = (b: Buffer) => createHash('md5').update(b).digest('hex');
  for (const p of pages) {
    const bareBody = Buffer.from(await (await fetch(bareBase + p.path)).arrayBuffer());
    if (md5(bareBody) !== md5(p.body))
      throw new Error(`the bare server does not return the same bytes for ${p.path}`);
  }

  const scenarios: Scenario[] = pages.flatMap((p) => [
    { name: `bare ${p.path}`, url: bareBase + p.path, pid: bare.child.pid!, headers: {} },
    { name: `atrium ${p.path}`, url: atriumUrl + p.path, pid: atrium.child.pid!, headers },
  ]);
  process.stdout.write(
    `cache-hit bench: ${cpus()[0]?.model ?? 'unknown CPU'} ×${cpus().length}, node ${process.version}, ` +
      `${CONNECTIONS} connections, ${ROUNDS} × ${DURATION_S} s per scenario, interleaved\n`,
  );
  for (const s of scenarios) await run(s, WARMUP_S);
  const samples = new Map<string, Sample[]>(scenarios.map((s) => [s.name, []]));
  for (let round = 1; round <= ROUNDS; round++) {
    for (const s of scenarios) {
      const sample = await run(s, DURATION_S);
      samples.get(s.name)!.push(sample);
      process.stdout.write(
        `  round ${round} ${s.name.padEnd(48)} ${sample.reqPerSec.toFixed(0).padStart(7)} req/s  ` +
          `${sample.cpuUsPerReq.toFixed(1).padStart(6)} µs CPU/req  p50 ${sample.p50} ms  p99 ${sample.p99} ms\n`,
      );
      await sleep(500);
    }
  }
  const summary = (name: string) => {
    const xs = samples.get(name)!;
    return {
      reqPerSec: median(xs.map((x) => x.reqPerSec)),
      cpuUsPerReq: median(xs.map((x) => x.cpuUsPerReq)),
      p50: median(xs.map((x) => x.p50)),
      p99: median(xs.map((x) => x.p99)),
    };
  };
  process.stdout.write('\nmedians (ratio to the bare server in the same run; guard: CPU/req ≤ 4×)\n');
  const results = pages.map((p) => {
    const b = summary(`bare ${p.path}`);
    const a = summary(`atrium ${p.path}`);
    const ratios = { reqPerSec: a.reqPerSec / b.reqPerSec, cpuPerReq: a.cpuUsPerReq / b.cpuUsPerReq };
    const ok = ratios.cpuPerReq <= 4;
    process.stdout.write(
      `  ${p.path} (${p.body.length} B): bare ${b.reqPerSec.toFixed(0)} req/s ${b.cpuUsPerReq.toFixed(1)} µs/req; ` +
        `atrium hit ${a.reqPerSec.toFixed(0)} req/s ${a.cpuUsPerReq.toFixed(1)} µs/req → req/s ` +
        `${ratios.reqPerSec.toFixed(2)}, CPU/req ${ratios.cpuPerReq.toFixed(2)}× ${ok ? '(within the guard)' : '(OUTSIDE the guard)'}\n`,
    );
    return { path: p.path, bodyBytes: p.body.length, bare: b, atriumHit: a, ratios, withinGuard: ok };
  });
  const stageUs = await stageOnly();
  process.stdout.write(
    `  the cache stage alone (in-process, memory store): ${stageUs.toFixed(1)} µs CPU per hit\n`,
  );
  const result = {
    date: new Date().toISOString(),
    cacheStageOnlyUsPerHit: stageUs,
    cpu: `${cpus()[0]?.model ?? 'unknown'} ×${cpus().length}`,
    loadAverage: loadavg(),
    node: process.version,
    connections: CONNECTIONS,
    rounds: ROUNDS,
    durationS: DURATION_S,
    guards: { cpuPerReqAtMost: 4 },
    results,
  };
  mkdirSync(dirname(OUT), { recursive: true });
  writeFileSync(OUT, JSON.stringify(result, null, 2) + '\n');
  process.stdout.write(`written to ${OUT}\n`);
}

function stopAll(): void {
  for (const c of children) if (c.exitCode === null && c.pid) c.kill('SIGTERM');
}

main().then(
  () => {
    stopAll();
    process.exit(0);
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    stopAll();
    process.exit(1);
  },
);
