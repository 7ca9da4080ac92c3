import type { FleetResult } from './fleet.js';
import { pairedRatio, type ScenarioSummary, type TargetResult } from './report.js';

const fmt = (v: number, digits = 0) =>
  Number.isFinite(v)
    ? v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '–';

export interface HitBesideNginx {
  atriumUs: number;
  nginxUs: number;
  /** Atrium's hit CPU per request ÷ nginx's (paired by round, median). */
  ratio: number;
  atriumToCeiling: number;
  nginxToCeiling: number;
}

/** The hit beside nginx's hit: reported, no target (the price of what Atrium does on a hit). */
export function hitBesideNginx(scenarios: readonly ScenarioSummary[]): HitBesideNginx | undefined {
  const s = (id: string) => scenarios.find((x) => x.id === id && x.runs.length > 0);
  const hit = s('atrium-hit-2k');
  const nginx = s('nginx-hit-2k');
  if (!hit || !nginx) return undefined;
  return {
    atriumUs: hit.median.cpuUsPerReq,
    nginxUs: nginx.median.cpuUsPerReq,
    ratio: pairedRatio(hit, nginx, 'cpuUsPerReq'),
    atriumToCeiling: hit.ratioToCeiling.cpuUsPerReq,
    nginxToCeiling: nginx.ratioToCeiling.cpuUsPerReq,
  };
}

export function hitBesideNginxLine(h: HitBesideNginx): string {
  return (
    `Cache hit, 2 KB, server CPU per request: Atrium ${h.atriumUs} µs = ${h.ratio} × nginx proxy_cache's ` +
    `(${h.nginxUs} µs, ${h.nginxToCeiling} × the ceiling) and ${h.atriumToCeiling} × the ceiling's ` +
    '(no target: nginx authenticates, throttles, counts, logs and measures nothing)'
  );
}

export function fleetTargets(results: readonly FleetResult[]): TargetResult[] {
  const a = results.find((r) => r.fleet === 'atrium');
  const n = results.find((r) => r.fleet === 'nginx');
  if (!a)
    return ['fleet-calls', 'cooldown-calls', 'cooldown-p99', 'cooldown-retry-after'].map((id) => ({
      id,
      target: id,
      measured: '–',
      met: null,
      note: 'scenario not run',
    }));
  const beside = n ? `; nginx ${n.main.callsPerMinimum} × (${n.main.vendorCalls} calls)` : '';
  return [
    {
      id: 'fleet-calls',
      target: 'Fleet of 3: vendor calls ≤ 1.02 × the minimum the traffic allows',
      measured: `Atrium ${a.main.callsPerMinimum} × (${a.main.vendorCalls} calls, minimum ${a.main.minimum})${beside}`,
      met: a.main.callsPerMinimum <= 1.02 && a.main.errors === 0,
    },
    {
      id: 'cooldown-calls',
      target: `Vendor cooldown: 0 vendor calls after the discovery (the calls of its first 250 ms)`,
      measured:
        `Atrium ${a.cooldown.vendorCallsAfterDiscovery} (${a.cooldown.vendorCalls} in all)` +
        (n ? `; nginx ${n.cooldown.vendorCallsAfterDiscovery} (${n.cooldown.vendorCalls} in all)` : ''),
      met: a.cooldown.vendorCallsAfterDiscovery === 0,
    },
    {
      id: 'cooldown-p99',
      target: "Vendor cooldown: p99 of the answers served from the cache ≤ the hit's p99 + 5 ms",
      measured: `Atrium ${fmt(a.cooldown.servedP99Ms, 2)} ms vs hit ${fmt(a.main.hitP99Ms, 2)} ms`,
      met: Number.isFinite(a.cooldown.servedP99Ms) ? a.cooldown.servedP99Ms <= a.main.hitP99Ms + 5 : null,
      note: `${fmt(a.cooldown.servedShare * 100, 1)} % of requests answered from the cache`,
    },
    {
      id: 'cooldown-retry-after',
      target: 'Vendor cooldown: every refusal carries Retry-After',
      measured:
        `Atrium ${a.cooldown.refusalsWithoutRetryAfter} of ${a.cooldown.refusals} without` +
        (n ? `; nginx ${n.cooldown.refusalsWithoutRetryAfter} of ${n.cooldown.refusals}` : ''),
      met: a.cooldown.refusalsWithoutRetryAfter === 0 && a.cooldown.errors === 0,
    },
  ];
}

export const FLEET_HEADER = [
  'fleet (3 nodes)',
  'requests',
  'vendor calls',
  '÷ minimum',
  '÷ URL minimum',
  'p50 ms',
  'p99 ms',
  'errors',
  'CPU µs/req (fleet)',
  'cooldown: vendor calls',
  'after discovery',
  'from cache',
  'p99 ms',
  'refusals w/o Retry-After',
];

export function fleetRows(results: readonly FleetResult[]): string[][] {
  return results.map((r) => [
    r.fleet,
    fmt(r.main.requests),
    fmt(r.main.vendorCalls),
    `${fmt(r.main.callsPerMinimum, 3)}×`,
    `${fmt(r.main.callsPerUrlMinimum, 3)}×`,
    fmt(r.main.p50Ms, 2),
    fmt(r.main.p99Ms, 2),
    fmt(r.main.requests - (r.main.statusCounts['200'] ?? 0)),
    fmt(r.main.cpuUsPerReq, 1),
    fmt(r.cooldown.vendorCalls),
    fmt(r.cooldown.vendorCallsAfterDiscovery),
    `${fmt(r.cooldown.servedShare * 100, 1)} %`,
    fmt(r.cooldown.servedP99Ms, 2),
    `${r.cooldown.refusalsWithoutRetryAfter} of ${r.cooldown.refusals}`,
  ]);
}
