// Idle watch streams on one replica (`npm run bench:watch`): the built gateway (`node dist/main.js`, with the
// soak's probe) in front of the sandbox's macro fake. It measures the cache-hit load (the bench's load
// generator and settings: closed loop, 50 connections, 6 s after a 2 s warm-up) alone, then the live heap and
// RSS after a full collection, then opens WATCH_STREAMS idle `GET /watch` streams (one socket each, all
// watching one series), measures memory again, and runs the same hit load beside them; then, as the
// reference, beside as many idle keep-alive connections that hold no stream. Per stream = the memory growth
// over the streams. BENCH_ROUNDS (3) rounds interleave the three loads; the hit figures are medians. The
// connections are held by a child process (bench/lib/socket-holder.ts), not beside the load generator.
// Writes <BENCH_OUT>/watch-idle.json (default bench/results) and prints the table of docs/performance.md.
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FakeMacroUpstream } from '../src/sandbox/macro/fake-macro.upstream.js';
import { runLoad, type LoadResult } from './lib/load.js';
import { envNumber, ROOT } from './lib/options.js';
import { startProbedGateway } from './lib/probed-gateway.js';
import type { HoldSpec } from './lib/socket-holder.js';
import type { SoakSample } from './soak-probe.js';

const STREAMS = envNumber('WATCH_STREAMS', 10_000, 1);
const HIT_SECONDS = envNumber('BENCH_DURATION', 6, 1);
const WARMUP_SECONDS = envNumber('BENCH_WARMUP', 2, 1);
const CONNECTIONS = envNumber('BENCH_CONNECTIONS', 50, 1);
const ROUNDS = Math.floor(envNumber('BENCH_ROUNDS', 3, 1));
/** Streams opening at once (each reads the series through the cache as its consumer first). */
const OPENING = 200;
const OUT = resolve(process.env.BENCH_OUT ?? join(ROOT, 'bench/results'));
const WATCHED = '/macro/series/310112/data';
const HIT = '/macro/series/310112/metadata';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A sample after a full collection in the gateway (the probe runs gc() when asked). */
function settled(child: ChildProcess): Promise<SoakSample> {
  return new Promise((res, rej) => {
    const t = setTimeout(() => rej(new Error('no settled sample from the probe in 30 s')), 30_000);
    const on = (m: { settled?: SoakSample }) => {
      if (!m.settled) return;
      clearTimeout(t);
      child.off('message', on);
      res(m.settled);
    };
    child.on('message', on);
    child.send({ settled: true });
  });
}

/** Two collections a moment apart, the second one read: what stays live. */
async function memory(child: ChildProcess): Promise<SoakSample> {
  await settled(child);
  await sleep(500);
  return settled(child);
}

/**
 * `count` idle connections held by a child process (bench/lib/socket-holder.ts); resolves with the seconds
 * they took to open. Killing the child closes them.
 */
async function holdConnections(spec: HoldSpec): Promise<{ holder: ChildProcess; seconds: number }> {
  const holder = fork(join(ROOT, 'dist-bench/bench/lib/socket-holder.js'), [], { stdio: 'inherit' });
  const seconds = await new Promise<number>((res, rej) => {
    holder.once('message', (m: { opened?: number; failed?: string }) =>
      m.failed === undefined ? res(m.opened!) : rej(new Error(m.failed)),
    );
    holder.once('exit', (code) => rej(new Error(`the socket holder exited (${code})`)));
    holder.send({ open: spec });
  });
  return { holder, seconds };
}

/** Stops a holder and waits for it: its connections are closed when it has gone. */
async function release(holder: ChildProcess): Promise<void> {
  if (holder.exitCode !== null || holder.signalCode !== null) return;
  const gone = new Promise((r) => holder.once('exit', r));
  holder.kill('SIGTERM');
  await gone;
}

const mid = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];

/**
 * Each figure's median over the rounds (req/s, p50 and p99 each on its own, not one round's set); the
 * answers and their statuses are the rounds' sums.
 */
function median(runs: LoadResult[]): LoadResult {
  const statusCounts: Record<string, number> = {};
  for (const r of runs)
    for (const [status, n] of Object.entries(r.statusCounts))
      statusCounts[status] = (statusCounts[status] ?? 0) + n;
  const latency = (k: keyof LoadResult['latencyMs']) => mid(runs.map((r) => r.latencyMs[k]));
  return {
    requests: runs.reduce((n, r) => n + r.requests, 0),
    wallS: runs.reduce((n, r) => n + r.wallS, 0),
    reqPerSec: mid(runs.map((r) => r.reqPerSec)),
    errors: runs.reduce((n, r) => n + r.errors, 0),
    timeouts: runs.reduce((n, r) => n + r.timeouts, 0),
    statusCounts,
    latencyMs: { p50: latency('p50'), p99: latency('p99'), mean: latency('mean'), max: latency('max') },
  };
}

const mb = (n: number) => (n / 1048576).toFixed(1);
const kb = (n: number) => (n / 1024).toFixed(1);

const reqs = (runs: LoadResult[]) => runs.map((r) => Math.round(r.reqPerSec)).join(' / ');

function hitRow(label: string, r: LoadResult): string {
  const ok = r.statusCounts['200'] ?? 0;
  return `| ${label} | ${Math.round(r.reqPerSec)} | ${r.latencyMs.p50.toFixed(2)} | ${r.latencyMs.p99.toFixed(2)} | ${ok} / ${r.requests} |`;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'atrium-watch-idle-'));
  const key = `atr_watch_${randomBytes(18).toString('base64url')}`;
  const token = `watch-macro-${randomBytes(9).toString('hex')}`;
  const macro = new FakeMacroUpstream({ token });
  await macro.start();
  let child: ChildProcess | undefined;
  const holders: ChildProcess[] = [];
  try {
    const gateway = await startProbedGateway({
      dir,
      consumer: { id: 'watch-bench', key, upstreams: ['macro'] },
      logLevel: 'warn',
      nodeArgs: ['--expose-gc', ...(process.env.BENCH_ATRIUM_NODE_ARGS ?? '').split(/\s+/).filter(Boolean)],
      env: {
        UPSTREAM_MACRO_BASE_URL: macro.url,
        UPSTREAM_MACRO_TOKEN: token,
        ATRIUM_WATCH_MAX_PATHS_PER_CONSUMER: String(Math.min(10_000, STREAMS)),
        ATRIUM_WATCH_MAX_STREAMS: String(STREAMS + 100),
      },
    });
    child = gateway.child;
    const { url, port } = gateway;
    const headers = { authorization: `Bearer ${key}` };
    for (const p of [HIT, WATCHED]) {
      const r = await fetch(url + p, { headers });
      if (r.status !== 200) throw new Error(`${p}: ${r.status} ${await r.text()}`);
    }
    const load = () => runLoad({ url, path: HIT, headers, connections: CONNECTIONS, durationS: HIT_SECONDS });
    // A warm-up first (the bench's too): the first seconds of a process measure its compiler, not the hit.
    await runLoad({ url, path: HIT, headers, connections: CONNECTIONS, durationS: WARMUP_SECONDS });
    const streamRequest =
      `GET /watch?path=${encodeURIComponent(WATCHED)} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
      `Authorization: Bearer ${key}\r\nAccept: text/event-stream\r\n\r\n`;
    const openStreams = () =>
      holdConnections({
        port,
        request: streamRequest,
        openedWhen: 'event: answer',
        count: STREAMS,
        batch: OPENING,
      });
    // The reference: as many idle keep-alive connections that hold no stream (what any server pays to hold them).
    const openPlain = () =>
      holdConnections({
        port,
        request: `GET /health/live HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n\r\n`,
        openedWhen: '\r\n\r\n',
        count: STREAMS,
        batch: OPENING,
      });
    const besideHeld = async (open: () => Promise<{ holder: ChildProcess; seconds: number }>) => {
      const held = await open();
      holders.push(held.holder);
      await sleep(1000);
      const r = await load();
      await release(held.holder);
      return r;
    };

    // Round 1 measures memory too: before the streams, then with them (after a full collection each time).
    console.log(`round 1: hit load alone (${CONNECTIONS} connections, ${HIT_SECONDS} s)…`);
    const alone = [await load()];
    const before = await memory(child);
    console.log(`round 1: opening ${STREAMS} idle watch streams…`);
    const streams = await openStreams();
    holders.push(streams.holder);
    const openedS = streams.seconds;
    await sleep(1000);
    const after = await memory(child);
    const metrics = await (await fetch(`${url}/metrics`)).text();
    const streamsGauge = Number(/^atrium_watch_streams (\d+)/m.exec(metrics)?.[1]);
    console.log(`round 1: hit load beside ${streamsGauge} streams…`);
    const besideStreams = [await load()];
    await release(streams.holder);
    console.log(`round 1: hit load beside ${STREAMS} idle connections…`);
    const besideConnections = [await besideHeld(openPlain)];
    // Further rounds interleave the three loads again: the figures are medians over rounds.
    for (let round = 2; round <= ROUNDS; round++) {
      console.log(`round ${round}…`);
      alone.push(await load());
      besideStreams.push(await besideHeld(openStreams));
      besideConnections.push(await besideHeld(openPlain));
    }
    const hitAlone = median(alone);
    const hitBeside = median(besideStreams);
    const hitBesideConnections = median(besideConnections);
    const perStream = {
      heapBytes: (after.heapUsed - before.heapUsed) / STREAMS,
      rssBytes: (after.rss - before.rss) / STREAMS,
      externalBytes: (after.external - before.external) / STREAMS,
    };
    const result = {
      at: new Date().toISOString(),
      machine: `${cpus().length} × ${cpus()[0]?.model ?? 'cpu'}`,
      node: process.version,
      streams: STREAMS,
      streamsGauge,
      openedSeconds: Math.round(openedS * 10) / 10,
      before: { rss: before.rss, heapUsed: before.heapUsed, external: before.external },
      after: { rss: after.rss, heapUsed: after.heapUsed, external: after.external },
      perStream,
      hit: { alone: hitAlone, besideConnections: hitBesideConnections, besideStreams: hitBeside },
      rounds: { alone, besideStreams, besideConnections },
      settings: {
        connections: CONNECTIONS,
        seconds: HIT_SECONDS,
        rounds: ROUNDS,
        watched: WATCHED,
        hit: HIT,
      },
    };
    mkdirSync(OUT, { recursive: true });
    writeFileSync(join(OUT, 'watch-idle.json'), JSON.stringify(result, null, 2) + '\n');
    const lines = [
      `${STREAMS} idle watch streams on one replica (${streamsGauge} open by atrium_watch_streams), opened in ${result.openedSeconds} s; ${result.machine}, Node ${process.version}.`,
      '',
      '| | live heap | RSS |',
      '|---|---|---|',
      `| before the streams | ${mb(before.heapUsed)} MB | ${mb(before.rss)} MB |`,
      `| with ${STREAMS} streams | ${mb(after.heapUsed)} MB | ${mb(after.rss)} MB |`,
      `| per stream | ${kb(perStream.heapBytes)} KB | ${kb(perStream.rssBytes)} KB |`,
      '',
      '| cache hit | req/s | p50 ms | p99 ms | 200s |',
      '|---|---|---|---|---|',
      hitRow('alone', hitAlone),
      hitRow(`beside ${STREAMS} idle keep-alive connections (no stream)`, hitBesideConnections),
      hitRow(`beside ${STREAMS} idle streams`, hitBeside),
      '',
      `req/s by round: alone ${reqs(alone)}; beside the connections ${reqs(besideConnections)}; beside the streams ${reqs(besideStreams)}.`,
      `Medians: beside the streams ${(hitBeside.reqPerSec / hitAlone.reqPerSec).toFixed(2)} × the req/s alone, ` +
        `${(hitBeside.reqPerSec / hitBesideConnections.reqPerSec).toFixed(2)} × beside the plain connections.`,
    ];
    console.log(lines.join('\n'));
  } finally {
    await Promise.all(holders.map(release));
    child?.kill('SIGTERM');
    await macro.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((e: unknown) => {
  console.error(e);
  process.exit(1);
});
