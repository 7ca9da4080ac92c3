import { request } from 'undici';
import { burst, runLoad } from './load.js';
import { md5, payload } from './payloads.js';
import { CLK_TCK, cpuSeconds, machineBusySeconds, peakRssBytes, resetPeakRss, rssBytes } from './procfs.js';
import { burstPath, pathFor, type BurstScenario, type LoadScenario } from './scenarios.js';
import type { RunningServer, ServerId } from './servers.js';

export interface RunMetrics {
  round: number;
  requests: number;
  wallS: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  meanMs: number;
  /** Server process CPU (user + system, all threads) per response. */
  cpuUsPerReq: number;
  /** Highest resident set size during the run. */
  peakRssMB: number;
  upstreamCalls: number;
  upstreamCallsPerReq: number;
  errors: number;
  timeouts: number;
  statusCounts: Record<string, number>;
  /** Responses whose status was not the one the scenario expects. */
  unexpected: number;
  /** For context: what the load generator (this process) and the fake upstream spent per response. */
  loadgenCpuUsPerReq: number;
  upstreamCpuUsPerReq: number;
  /** Cores kept busy by processes outside the bench during the run (the machine is shared). */
  otherLoadCores: number;
}

export interface BurstMetrics {
  round: number;
  clients: number;
  upstreamCalls: number;
  statusCounts: Record<string, number>;
  /** Distinct bodies among the 200 answers, and whether they all are the expected payload. */
  distinctBodies: number;
  bodiesMatchPayload: boolean;
  errors: number;
  wallMs: number;
  cpuMs: number;
}

export interface CheckResult {
  status: number;
  md5Match: boolean | null;
  /** X-Cache of the first and second identical request (hit scenarios). */
  xCache: Array<string | null>;
  retryAfter?: string | null;
  errorCode?: string | null;
  ok: boolean;
}

export interface Harness {
  servers: Map<ServerId, RunningServer>;
  upstream: RunningServer;
  headers: Record<string, string>;
  connections: number;
}

const round1 = (v: number) => Math.round(v * 10) / 10;
const round3 = (v: number) => Math.round(v * 1000) / 1000;

export async function laneCalls(upstream: RunningServer): Promise<Record<string, number>> {
  const res = await request(upstream.url + '/__stats');
  const body = (await res.body.json()) as { calls: Record<string, number> };
  return body.calls;
}

/** CPU seconds of every process of the bench: the servers, the fake upstream and this runner. */
function oursSeconds(h: Harness): number {
  let sum = processCpuSeconds();
  for (const s of h.servers.values()) sum += cpuSeconds(s.pid);
  return sum;
}

function processCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

/** Samples RSS while a run lasts, as a fallback and cross-check for VmHWM. */
function rssSampler(pid: number): { stop(): number } {
  let max = 0;
  const read = () => {
    try {
      max = Math.max(max, rssBytes(pid));
    } catch {
      // process gone: the run reports its errors
    }
  };
  read();
  const t = setInterval(read, 200);
  return {
    stop() {
      clearInterval(t);
      read();
      return max;
    },
  };
}

/**
 * Waits until the bench's processes are quiet (at most two clock ticks together per 100 ms, up to `maxMs`), so
 * a server still draining the previous run's requests, or collecting garbage, does not bill the next one.
 */
export async function settle(h: Harness, maxMs = 3000): Promise<void> {
  const pids = [...h.servers.values()].map((s) => s.pid);
  const total = () => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  const deadline = Date.now() + maxMs;
  let before = total();
  while (Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 100));
    const now = total();
    if (now - before <= 2 / CLK_TCK) return;
    before = now;
  }
}

/** One measured (or warm-up) run of a load scenario against its server. */
export async function measureLoad(
  h: Harness,
  s: LoadScenario,
  durationS: number,
  round: number,
  tag: string,
): Promise<RunMetrics> {
  const server = h.servers.get(s.server)!;
  await settle(h);
  const lanesBefore = await laneCalls(h.upstream);
  const resetOk = resetPeakRss(server.pid);
  const sampler = rssSampler(server.pid);
  const cpu0 = cpuSeconds(server.pid);
  const up0 = cpuSeconds(h.upstream.pid);
  const gen0 = processCpuSeconds();
  const ours0 = oursSeconds(h);
  const machine0 = machineBusySeconds();
  const load = await runLoad({
    url: server.url,
    path: pathFor(s, tag),
    headers: h.headers,
    connections: h.connections,
    durationS,
  });
  const cpu1 = cpuSeconds(server.pid);
  const up1 = cpuSeconds(h.upstream.pid);
  const gen1 = processCpuSeconds();
  const ours1 = oursSeconds(h);
  const machine1 = machineBusySeconds();
  const sampled = sampler.stop();
  const peak = resetOk ? Math.max(peakRssBytes(server.pid), sampled) : sampled;
  const lanesAfter = await laneCalls(h.upstream);
  const calls = (lanesAfter[s.server] ?? 0) - (lanesBefore[s.server] ?? 0);
  const n = Math.max(1, load.requests);
  const expected = load.statusCounts[s.expectStatus] ?? 0;
  return {
    round,
    requests: load.requests,
    wallS: round3(load.wallS),
    reqPerSec: round1(load.reqPerSec),
    p50Ms: load.latencyMs.p50,
    p99Ms: load.latencyMs.p99,
    meanMs: load.latencyMs.mean,
    cpuUsPerReq: round1(((cpu1 - cpu0) * 1e6) / n),
    peakRssMB: round1(peak / 1024 / 1024),
    upstreamCalls: calls,
    upstreamCallsPerReq: round3(calls / n),
    errors: load.errors,
    timeouts: load.timeouts,
    statusCounts: load.statusCounts,
    unexpected: load.requests - expected,
    loadgenCpuUsPerReq: round1(((gen1 - gen0) * 1e6) / n),
    upstreamCpuUsPerReq: round1(((up1 - up0) * 1e6) / n),
    otherLoadCores: round1(Math.max(0, machine1 - machine0 - (ours1 - ours0)) / load.wallS),
  };
}

/** One burst: `clients` simultaneous requests for one cold key; the fake counts the calls it got. */
export async function measureBurst(
  h: Harness,
  b: BurstScenario,
  clients: number,
  round: number,
  tag: string,
): Promise<BurstMetrics> {
  const server = h.servers.get(b.server)!;
  await settle(h);
  const before = await laneCalls(h.upstream);
  const cpu0 = cpuSeconds(server.pid);
  const res = await burst(server.port, burstPath(b, tag), h.headers, clients);
  const cpu1 = cpuSeconds(server.pid);
  // Let any straggling upstream call land before counting.
  await new Promise((r) => setTimeout(r, b.delayMs + 200));
  const after = await laneCalls(h.upstream);
  const expected = md5(payload('2k'));
  const ok200 = res.statusCounts['200'] ?? 0;
  return {
    round,
    clients,
    upstreamCalls: (after[b.server] ?? 0) - (before[b.server] ?? 0),
    statusCounts: res.statusCounts,
    distinctBodies: Object.keys(res.bodies).length,
    bodiesMatchPayload: ok200 === clients && res.bodies[expected] === clients,
    errors: res.errors,
    wallMs: res.wallMs,
    cpuMs: Math.round((cpu1 - cpu0) * 1000),
  };
}

async function get(url: string, headers: Record<string, string>) {
  const res = await request(url, { headers, headersTimeout: 15_000, bodyTimeout: 15_000 });
  const body = Buffer.from(await res.body.arrayBuffer());
  const header = (name: string) => {
    const v = res.headers[name];
    return v === undefined ? null : Array.isArray(v) ? v.join(', ') : v;
  };
  return { status: res.statusCode, body, header };
}

/**
 * Before measuring: the scenario answers with the expected status and, for 200s, exactly the payload
 * bytes (md5), so every server is compared on the same work. Hit scenarios ask twice and record X-Cache.
 */
export async function checkScenario(h: Harness, s: LoadScenario, tag: string): Promise<CheckResult> {
  const server = h.servers.get(s.server)!;
  const p = pathFor(s, tag);
  const path = typeof p === 'function' ? p() : p;
  const first = await get(server.url + path, h.headers);
  const xCache = [first.header('x-cache')];
  if (s.kind === 'hit') xCache.push((await get(server.url + path, h.headers)).header('x-cache'));
  // A view's answer composes the payloads: it must be complete instead of byte-equal to one.
  const md5Match = first.status !== 200 || s.view ? null : md5(first.body) === md5(payload(s.size));
  const viewComplete = s.view ? first.header('x-atrium-complete') === 'true' : true;
  let errorCode: string | null | undefined;
  if (s.kind === 'storm') {
    try {
      errorCode =
        (JSON.parse(first.body.toString('utf8')) as { error?: { code?: string } }).error?.code ?? null;
    } catch {
      errorCode = null;
    }
  }
  return {
    status: first.status,
    md5Match,
    xCache,
    ...(s.kind === 'storm' ? { retryAfter: first.header('retry-after'), errorCode } : {}),
    ok: first.status === s.expectStatus && md5Match !== false && viewComplete,
  };
}
