// Starts the fleet scenario's processes, replays the traffic to each fleet in turn (one fleet at a time, so
// they do not share the cores), stops them and clears the run's Redis keys.
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import { runFleet, type FleetResult, type FleetSettings } from './fleet.js';
import { FLEET_COLORS, renderFleetChart, type FleetSeries } from './fleet-chart.js';
import { startNginx } from './nginx.js';
import type { FleetOptions } from './options.js';
import { startServer, type RunningServer, type ServerId, type ServerSpec } from './servers.js';
import { generateTraffic, minimumCalls, urlKey } from './traffic.js';

export interface FleetRunInput {
  readonly opts: FleetOptions;
  /** Where logs, nginx's directories and temporary files go. */
  readonly tmp: string;
  /** The vendor process spec (built by the runner). */
  readonly vendorSpec: ServerSpec;
  /** An Atrium replica's spec: its vendor lane is `fleet-atrium`, its Redis prefix the fleet's. */
  readonly atriumSpec: (id: ServerId, vendor: RunningServer, redisPrefix: string) => ServerSpec;
  /** Consumers' keys (index = consumer). */
  readonly keys: readonly string[];
  /** The nginx binary, or undefined: the peer is skipped. */
  readonly nginxBin?: string;
  readonly log: (line: string) => void;
  /** Every process started, so the runner's signal handler can stop it too. */
  readonly track: (s: RunningServer) => void;
}

export interface FleetRun {
  settings: FleetOptions & { atriumNodes: number; nginxNodes: number };
  traffic: {
    requests: number;
    mainRequests: number;
    distinctSeries: number;
    distinctUrls: number;
    bursts: number;
  };
  results: FleetResult[];
  /** Why the nginx fleet was not run (nginx missing). */
  nginxSkipped?: string;
  chart: string;
}

const NODES = 3;

async function clearPrefix(url: string, prefix: string): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 1 });
  try {
    await redis.connect();
    let cursor = '0';
    do {
      const [next, keys] = await redis.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length) await redis.del(...keys);
    } while (cursor !== '0');
  } finally {
    redis.disconnect();
  }
}

async function redisReachable(url: string): Promise<string | undefined> {
  const redis = new Redis(url, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 2000 });
  try {
    await redis.connect();
    await redis.ping();
    return undefined;
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  } finally {
    redis.disconnect();
  }
}

export async function runFleetScenario(x: FleetRunInput): Promise<FleetRun> {
  const o = x.opts;
  const unreachable = await redisReachable(o.redisUrl);
  if (unreachable)
    throw new Error(
      `the fleet scenario needs Redis at ${o.redisUrl} (BENCH_FLEET_REDIS_URL): ${unreachable}`,
    );
  const traffic = generateTraffic({
    keys: o.keys,
    zipfS: o.zipfS,
    ratePerS: o.ratePerS,
    durationS: o.durationS + o.cooldownS,
    burstEveryS: o.burstEveryS,
    burstClients: o.burstClients,
    burstSpreadMs: 5,
    consumers: o.consumers,
    seed: 33,
  });
  const mainEnd = o.durationS * 1000;
  const main = traffic.filter((r) => r.t < mainEnd);
  const settings: FleetSettings = {
    ttlMs: o.ttlS * 1000,
    durationS: o.durationS,
    cooldownS: o.cooldownS,
    vendorDelayMs: o.vendorDelayMs,
    warmupS: o.warmupS,
  };
  x.log(
    `fleet: ${traffic.length} requests over ${o.durationS} s + ${o.cooldownS} s cooldown, ` +
      `${new Set(main.map((r) => r.key)).size} series asked, TTL ${o.ttlS} s, vendor ${o.vendorDelayMs} ms`,
  );
  const running: RunningServer[] = [];
  const stop = async (list: RunningServer[]) => {
    for (const s of list.reverse()) await s.stop();
  };
  const results: FleetResult[] = [];
  const prefix = `bench-fleet:${randomBytes(4).toString('hex')}:`;
  let nginxSkipped: string | undefined;
  const vendor = await startServer(x.vendorSpec, x.tmp);
  x.track(vendor);
  running.push(vendor);
  try {
    // Atrium: three replicas, one Redis prefix.
    const atrium: RunningServer[] = [];
    try {
      for (let i = 1; i <= NODES; i++) {
        const id = `fleet-atrium-${i}` as ServerId;
        const s = await startServer(x.atriumSpec(id, vendor, prefix), x.tmp);
        x.track(s);
        atrium.push(s);
        x.log(`started ${id} (pid ${s.pid}) on ${s.url}`);
      }
      const r = await runFleet(
        {
          fleet: 'atrium',
          lane: 'fleet-atrium',
          nodes: atrium,
          headersFor: (c) => ({ authorization: `Bearer ${x.keys[c % x.keys.length]}` }),
        },
        vendor,
        traffic,
        settings,
      );
      results.push(r);
      x.log(fleetLine(r));
    } finally {
      await stop(atrium);
      await clearPrefix(o.redisUrl, prefix).catch(() => undefined);
    }
    if (!x.nginxBin) nginxSkipped = 'nginx not found';
    else {
      const nginx: RunningServer[] = [];
      try {
        for (let i = 1; i <= NODES; i++) {
          const id = `fleet-nginx-${i}` as ServerId;
          const s = await startNginx({
            id,
            bin: x.nginxBin,
            upstreamUrl: `${vendor.url}/fleet-nginx/v2`,
            prefix: '/macro/',
            ttlS: o.ttlS,
            dir: join(x.tmp, id),
          });
          x.track(s);
          nginx.push(s);
          x.log(`started ${id} (nginx, pid ${s.pid}) on ${s.url}`);
        }
        // nginx cannot authenticate: its consumers send no key.
        const r = await runFleet(
          { fleet: 'nginx', lane: 'fleet-nginx', nodes: nginx, headersFor: () => ({}) },
          vendor,
          traffic,
          settings,
        );
        results.push(r);
        x.log(fleetLine(r));
      } finally {
        await stop(nginx);
      }
    }
  } finally {
    await stop(running);
  }

  const minimum = minimumCalls(main, settings.ttlMs);
  const series: FleetSeries[] = results.map((r) => ({
    label: `${r.fleet === 'atrium' ? 'Atrium' : 'nginx proxy_cache'}, 3 nodes: ${r.callTimes.length} calls`,
    color: r.fleet === 'atrium' ? FLEET_COLORS.atrium : FLEET_COLORS.nginx,
    times: r.callTimes,
  }));
  series.push({
    label: `minimum (one call per series and TTL window): ${minimum.length}`,
    color: FLEET_COLORS.minimum,
    times: minimum,
    dashed: true,
  });
  const chart = renderFleetChart(series, {
    title: 'Vendor calls over time: three Atrium replicas sharing Redis vs three nginx proxy_cache nodes',
    subtitle:
      `${traffic.length} requests, Zipf s=${o.zipfS} over ${o.keys} series + release bursts of ${o.burstClients}, ` +
      `4 spellings per request, TTL ${o.ttlS} s, vendor ${o.vendorDelayMs} ms; then the vendor answers 429 for ${o.cooldownS} s`,
    endMs: (o.durationS + o.cooldownS) * 1000,
    cooldownFromMs: mainEnd,
  });
  return {
    settings: {
      ...o,
      redisUrl: o.redisUrl.replace(/\/\/[^@/]*@/, '//***@'),
      atriumNodes: NODES,
      nginxNodes: NODES,
    },
    traffic: {
      requests: traffic.length,
      mainRequests: main.length,
      distinctSeries: new Set(main.map((r) => r.key)).size,
      distinctUrls: new Set(main.map(urlKey)).size,
      bursts: new Set(traffic.filter((r) => r.burst).map((r) => r.key)).size,
    },
    results,
    nginxSkipped,
    chart,
  };
}

function fleetLine(r: FleetResult): string {
  return (
    `fleet ${r.fleet.padEnd(6)} ${r.main.requests} requests → ${r.main.vendorCalls} vendor calls = ` +
    `${r.main.callsPerMinimum} × the minimum (${r.main.minimum}; ${r.main.callsPerUrlMinimum} × the URL-keyed ${r.main.minimumByUrl}), ` +
    `p50 ${r.main.p50Ms} ms, p99 ${r.main.p99Ms} ms, CPU ${r.main.cpuUsPerReq} µs/req, statuses ${JSON.stringify(r.main.statusCounts)}, ` +
    `refusals ${JSON.stringify(r.main.refusalCodes)}, ${r.main.errors} errors ${JSON.stringify(r.main.errorKinds)}, ${r.main.vendorCallsWithLangQuery} calls with lang in the query; cooldown: ${r.cooldown.vendorCalls} vendor calls (${r.cooldown.vendorCallsAfterDiscovery} after discovery), ` +
    `${(r.cooldown.servedShare * 100).toFixed(1)} % from cache, p99 ${r.cooldown.servedP99Ms} ms, ` +
    `${r.cooldown.refusalsWithoutRetryAfter} of ${r.cooldown.refusals} refusals without Retry-After ` +
    `${JSON.stringify(r.cooldown.refusalCodes)}; others ${r.otherLoadCores} cores`
  );
}
