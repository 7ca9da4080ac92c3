// The fleet scenario: the same recorded traffic, replayed round-robin to three Atrium replicas sharing
// Redis and then to three nginx nodes with proxy_cache (each its own cache), against one fake vendor that
// counts calls per fleet. After the main traffic the vendor refuses every call (429, Retry-After) for the
// cooldown while the traffic goes on: what does each fleet still answer, and what reaches the vendor?
import { Pool, request } from 'undici';
import { cpuSeconds, machineBusySeconds } from './procfs.js';
import type { RunningServer } from './servers.js';
import { minimumCalls, urlKey, type TrafficRequest } from './traffic.js';

export interface FleetSettings {
  readonly ttlMs: number;
  /** Seconds of main traffic, then seconds of vendor cooldown (the traffic goes on). */
  readonly durationS: number;
  readonly cooldownS: number;
  readonly vendorDelayMs: number;
  /** Seconds of unmeasured requests on other series first (JIT, connection pools). */
  readonly warmupS: number;
}

export interface FleetTarget {
  /** `atrium` or `nginx`. */
  readonly fleet: string;
  /** The vendor lane this fleet's calls arrive on. */
  readonly lane: string;
  readonly nodes: readonly RunningServer[];
  /** Headers of a consumer's request (its key), or none (nginx cannot authenticate). */
  readonly headersFor: (consumer: number) => Record<string, string>;
}

interface Sample {
  ms: number;
  status: number;
  /** The envelope's `error.code` of an answer other than 200 (what refused it). */
  code?: string;
  retryAfter: boolean;
  cache: string | null;
  cooldown: boolean;
}

export interface PhaseFigures {
  requests: number;
  statusCounts: Record<string, number>;
  /** Answers other than 200 by status and error code (`429 UPSTREAM_COOLING_DOWN`). */
  refusalCodes: Record<string, number>;
  /** No answer at all (connection error, timeout). */
  errors: number;
  /** The unanswered requests by the client's error name (`HeadersTimeoutError`, …). */
  errorKinds: Record<string, number>;
  p50Ms: number;
  p99Ms: number;
  /** CPU of every node of the fleet (user + system) per request of the phase. */
  cpuUsPerReq: number;
}

export interface FleetResult {
  fleet: string;
  nodes: number;
  main: PhaseFigures & {
    vendorCalls: number;
    /** p99 of the answers the cache gave (X-Cache HIT). */
    hitP99Ms: number;
    /** Minimum when every spelling of a series is one key (the figure's denominator). */
    minimum: number;
    /** Minimum when every URL is its own key (what a URL-keyed cache could reach at best). */
    minimumByUrl: number;
    callsPerMinimum: number;
    callsPerUrlMinimum: number;
    /** Calls that reached the vendor with `lang` in the query (not folded into the header). */
    vendorCallsWithLangQuery: number;
  };
  cooldown: PhaseFigures & {
    /** Calls that reached the vendor while it refused. */
    vendorCalls: number;
    /** Of those, calls arriving more than `DISCOVERY_MS` after the first refusal (beyond the discovery). */
    vendorCallsAfterDiscovery: number;
    /** Share of consumer requests answered 200 (from the cache: the vendor answered nothing else). */
    servedShare: number;
    servedP99Ms: number;
    /** Answers other than 200, and how many of them carried no Retry-After. */
    refusals: number;
    refusalsWithoutRetryAfter: number;
  };
  /** Vendor call times (ms from the start), for the chart. */
  callTimes: number[];
  /** Cores others kept busy during the run. */
  otherLoadCores: number;
}

/** A fleet needs this long after the first 429 to know the vendor is refusing (the calls already in flight). */
export const DISCOVERY_MS = 250;

const r1 = (v: number) => Math.round(v * 10) / 10;
const r3 = (v: number) => Math.round(v * 1000) / 1000;

function quantile(sorted: Float64Array, q: number): number {
  if (sorted.length === 0) return NaN;
  return r3(sorted[Math.min(sorted.length - 1, Math.ceil(q * sorted.length) - 1)]);
}

function figures(samples: Sample[], errorKinds: Record<string, number>, cpuS: number): PhaseFigures {
  const lat = Float64Array.from(samples.map((s) => s.ms)).sort();
  const statusCounts: Record<string, number> = {};
  const refusalCodes: Record<string, number> = {};
  for (const s of samples) {
    statusCounts[s.status] = (statusCounts[s.status] ?? 0) + 1;
    if (s.status !== 200) {
      const k = `${s.status} ${s.code ?? '(no code)'}`;
      refusalCodes[k] = (refusalCodes[k] ?? 0) + 1;
    }
  }
  const errors = Object.values(errorKinds).reduce((a, b) => a + b, 0);
  const n = samples.length + errors;
  return {
    requests: n,
    statusCounts,
    refusalCodes,
    errors,
    errorKinds,
    p50Ms: quantile(lat, 0.5),
    p99Ms: quantile(lat, 0.99),
    cpuUsPerReq: r1((cpuS * 1e6) / Math.max(1, n)),
  };
}

async function vendor(url: string, path: string): Promise<unknown> {
  const res = await request(url + path, { method: path.startsWith('/__cooldown') ? 'POST' : 'GET' });
  return res.body.json();
}

/** `error.code` of Atrium's envelope, `errors.code` of the vendor's (nginx passes it through). */
function errorCode(body: string): string | undefined {
  try {
    const j = JSON.parse(body) as { error?: { code?: string }; errors?: { code?: string } };
    return j.error?.code ?? j.errors?.code;
  } catch {
    return undefined;
  }
}

function ownCpuSeconds(): number {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1e6;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Unmeasured requests before the traffic: 20 at a time, on 50 series the traffic never asks for (`W…`), so
 * fresh processes have compiled their hot paths and opened their pools, and nothing of the traffic is cached.
 */
async function warmUp(pools: Pool[], target: FleetTarget, seconds: number): Promise<void> {
  const until = performance.now() + seconds * 1000;
  let n = 0;
  const worker = async () => {
    while (performance.now() < until) {
      const i = n++;
      const res = await pools[i % pools.length]
        .request({
          method: 'GET',
          path: `/macro/series/W${i % 50}/data?start_date=2015-01-01&count=40`,
          headers: { accept: 'application/json', ...target.headersFor(i) },
          headersTimeout: 30_000,
          bodyTimeout: 30_000,
        })
        .catch(() => undefined);
      await res?.body.dump();
    }
  };
  await Promise.all(Array.from({ length: 20 }, worker));
}

/** Replays the traffic to one fleet and measures it. `traffic` spans the main phase and the cooldown. */
export async function runFleet(
  target: FleetTarget,
  vendorServer: RunningServer,
  traffic: readonly TrafficRequest[],
  s: FleetSettings,
): Promise<FleetResult> {
  // Enough connections per node that a burst of hundreds is in flight at once, not queued in the client.
  const pools = target.nodes.map((n) => new Pool(n.url, { connections: 256, pipelining: 1 }));
  const pids = target.nodes.map((n) => n.pid);
  const fleetCpu = () => pids.reduce((sum, pid) => sum + cpuSeconds(pid), 0);
  const mainEnd = s.durationS * 1000;
  const samples: Sample[] = [];
  const mainErrors: Record<string, number> = {};
  const cooldownErrors: Record<string, number> = {};
  let inCooldown = false;
  let next = 0;
  const pending: Array<Promise<void>> = [];
  const fire = (r: TrafficRequest) => {
    const pool = pools[next++ % pools.length];
    const cooldown = inCooldown;
    const started = performance.now();
    const headers: Record<string, string> = { accept: 'application/json', ...target.headersFor(r.consumer) };
    if (r.variant === 'header') headers['accept-language'] = 'en';
    pending.push(
      pool
        .request({ method: 'GET', path: r.path, headers, headersTimeout: 30_000, bodyTimeout: 30_000 })
        .then(async (res) => {
          let code: string | undefined;
          if (res.statusCode === 200) await res.body.dump();
          else code = errorCode(await res.body.text());
          const cache = res.headers['x-cache'];
          samples.push({
            ms: performance.now() - started,
            status: res.statusCode,
            code,
            retryAfter: res.headers['retry-after'] !== undefined,
            cache: typeof cache === 'string' ? cache : null,
            cooldown,
          });
        })
        .catch((e: unknown) => {
          const kinds = cooldown ? cooldownErrors : mainErrors;
          const kind = e instanceof Error ? e.name : 'unknown';
          kinds[kind] = (kinds[kind] ?? 0) + 1;
        }),
    );
  };

  await warmUp(pools, target, s.warmupS);
  await vendor(vendorServer.url, `/__mark?lane=${target.lane}`);
  const machine0 = machineBusySeconds();
  const ours = () => fleetCpu() + cpuSeconds(vendorServer.pid) + ownCpuSeconds();
  const ours0 = ours();
  const cpu0 = fleetCpu();
  let cpuMain = 0;
  const started = performance.now();
  let t0 = started;
  let i = 0;
  // Open loop: every request leaves at its recorded offset, whatever the answers before it take.
  while (i < traffic.length) {
    const now = performance.now() - t0;
    if (!inCooldown && now >= mainEnd) {
      await Promise.all(pending.splice(0));
      cpuMain = fleetCpu() - cpu0;
      await vendor(vendorServer.url, `/__cooldown?lane=${target.lane}&ms=${s.cooldownS * 1000}`);
      inCooldown = true;
      // The cooldown's traffic starts now, at its recorded offsets, not in one catch-up batch of what
      // would have left while the main phase's last answers were awaited.
      t0 = performance.now() - mainEnd;
    }
    while (i < traffic.length && traffic[i].t <= now && (inCooldown || traffic[i].t < mainEnd))
      fire(traffic[i++]);
    if (i < traffic.length) await sleep(Math.min(5, Math.max(0, traffic[i].t - (performance.now() - t0))));
  }
  await Promise.all(pending.splice(0));
  if (!inCooldown) cpuMain = fleetCpu() - cpu0;
  const cpuAll = fleetCpu() - cpu0;
  const wallS = (performance.now() - started) / 1000;
  const machine1 = machineBusySeconds();
  const ours1 = ours();
  // Let a last background refresh land, then read what the vendor saw.
  await sleep(s.vendorDelayMs + 200);
  const stats = (await vendor(vendorServer.url, `/__stats?lane=${target.lane}`)) as {
    times: number[];
    langInQuery: number;
    refused: number[];
    cooldownAt: number | null;
  };
  await Promise.all(pools.map((p) => p.close()));

  const mainSamples = samples.filter((x) => !x.cooldown);
  const coolSamples = samples.filter((x) => x.cooldown);
  const mainTraffic = traffic.filter((r) => r.t < mainEnd);
  const minimum = minimumCalls(mainTraffic, s.ttlMs).length;
  const minimumByUrl = minimumCalls(mainTraffic, s.ttlMs, urlKey).length;
  // The cooldown began when the runner asked for it, just after the main phase's last answer.
  const cooldownAt = stats.cooldownAt ?? Infinity;
  const mainCalls = stats.times.filter((t) => t < cooldownAt).length;
  const firstRefusal = stats.refused[0] ?? Infinity;
  const hits = Float64Array.from(mainSamples.filter((x) => x.cache === 'HIT').map((x) => x.ms)).sort();
  const served = coolSamples.filter((x) => x.status === 200);
  const servedLat = Float64Array.from(served.map((x) => x.ms)).sort();
  const refusals = coolSamples.filter((x) => x.status !== 200);
  const main = figures(mainSamples, mainErrors, cpuMain);
  const cool = figures(coolSamples, cooldownErrors, cpuAll - cpuMain);
  return {
    fleet: target.fleet,
    nodes: target.nodes.length,
    main: {
      ...main,
      vendorCalls: mainCalls,
      hitP99Ms: quantile(hits, 0.99),
      minimum,
      minimumByUrl,
      callsPerMinimum: r3(mainCalls / Math.max(1, minimum)),
      callsPerUrlMinimum: r3(mainCalls / Math.max(1, minimumByUrl)),
      vendorCallsWithLangQuery: stats.langInQuery,
    },
    cooldown: {
      ...cool,
      vendorCalls: stats.refused.length,
      vendorCallsAfterDiscovery: stats.refused.filter((t) => t > firstRefusal + DISCOVERY_MS).length,
      servedShare: r3(served.length / Math.max(1, cool.requests)),
      servedP99Ms: quantile(servedLat, 0.99),
      refusals: refusals.length,
      refusalsWithoutRetryAfter: refusals.filter((x) => !x.retryAfter).length,
    },
    // On the traffic's clock: calls from the cooldown's start on are moved back by the pause before it.
    callTimes: stats.times.map((t) => (t >= cooldownAt ? t - (cooldownAt - mainEnd) : t)),
    otherLoadCores: r1(Math.max(0, machine1 - machine0 - (ours1 - ours0)) / wallS),
  };
}
