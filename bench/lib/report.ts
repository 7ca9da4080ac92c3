import type { BurstMetrics, CheckResult, RunMetrics } from './measure.js';
import { ceilingOf, type BurstScenario, type LoadScenario } from './scenarios.js';

export interface Medians {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerReq: number;
  /** The highest peak of all runs (not a median). */
  peakRssMB: number;
  upstreamCallsPerReq: number;
  loadgenCpuUsPerReq: number;
  /** Cores busy with other work during the runs (median): how shared the machine was. */
  otherLoadCores: number;
  /**
   * The least CPU per request of all rounds. Interference only adds CPU time, so on a shared machine this is
   * the closest to the path's own cost; the guards still use medians.
   */
  bestCpuUsPerReq: number;
}

export interface Ratios {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  cpuUsPerReq: number;
  peakRssMB: number;
}

export interface ScenarioSummary {
  id: string;
  title: string;
  server: string;
  kind: string;
  size: string;
  upstreamDelayMs: number;
  expectStatus: number;
  ceiling: string;
  check: CheckResult | null;
  runs: RunMetrics[];
  median: Medians;
  /** Median over rounds of (this scenario / the ceiling of the same body size, same round). */
  ratioToCeiling: Ratios;
  problems: string[];
}

export interface BurstSummary {
  id: string;
  title: string;
  server: string;
  clients: number;
  upstreamDelayMs: number;
  runs: BurstMetrics[];
  median: { upstreamCalls: number; wallMs: number };
  minUpstreamCalls: number;
  maxUpstreamCalls: number;
  /** Answers of all rounds by status. */
  statusCounts: Record<string, number>;
  problems: string[];
  /** Failures of the baseline: reported, not a failed run. */
  findings: string[];
}

export interface TargetResult {
  id: string;
  target: string;
  measured: string;
  /** null: the scenarios it needs were not run. */
  met: boolean | null;
  note?: string;
}

export function median(values: readonly number[]): number {
  const v = values.filter((x) => Number.isFinite(x)).sort((a, b) => a - b);
  if (v.length === 0) return NaN;
  const mid = Math.floor(v.length / 2);
  return v.length % 2 ? v[mid] : (v[mid - 1] + v[mid]) / 2;
}

const r2 = (v: number) => Math.round(v * 100) / 100;
const r1 = (v: number) => Math.round(v * 10) / 10;
const r3 = (v: number) => Math.round(v * 1000) / 1000;

type Metric = keyof Ratios;

/** Median over rounds of a.metric / b.metric, pairing runs of the same round. */
export function pairedRatio(a: { runs: RunMetrics[] }, b: { runs: RunMetrics[] }, metric: Metric): number {
  const values: number[] = [];
  for (const run of a.runs) {
    const other = b.runs.find((r) => r.round === run.round);
    if (other && other[metric] > 0) values.push(run[metric] / other[metric]);
  }
  return r2(median(values));
}

export function summarise(
  scenarios: readonly LoadScenario[],
  runs: ReadonlyMap<string, RunMetrics[]>,
  checks: ReadonlyMap<string, CheckResult>,
): ScenarioSummary[] {
  const partial = scenarios.map((s) => {
    const list = runs.get(s.id) ?? [];
    const problems: string[] = [];
    const check = checks.get(s.id) ?? null;
    if (check && !check.ok)
      problems.push(
        `check failed: status ${check.status} (expected ${s.expectStatus})` +
          (check.md5Match === false ? ', body differs from the payload (md5)' : ''),
      );
    for (const r of list) {
      if (r.errors || r.timeouts)
        problems.push(`round ${r.round}: ${r.errors} errors, ${r.timeouts} timeouts`);
      if (r.unexpected)
        problems.push(`round ${r.round}: ${r.unexpected} answers with a status other than ${s.expectStatus}`);
    }
    const m = (k: keyof RunMetrics) => r3(median(list.map((r) => r[k] as number)));
    return {
      id: s.id,
      title: s.title,
      server: s.server,
      kind: s.kind,
      size: s.size,
      upstreamDelayMs: s.delayMs,
      expectStatus: s.expectStatus,
      ceiling: ceilingOf(s),
      check,
      runs: list,
      median: {
        reqPerSec: r1(median(list.map((r) => r.reqPerSec))),
        p50Ms: m('p50Ms'),
        p99Ms: m('p99Ms'),
        cpuUsPerReq: r1(median(list.map((r) => r.cpuUsPerReq))),
        peakRssMB: r1(Math.max(0, ...list.map((r) => r.peakRssMB))),
        upstreamCallsPerReq: Math.round(median(list.map((r) => r.upstreamCallsPerReq)) * 1000) / 1000,
        loadgenCpuUsPerReq: r1(median(list.map((r) => r.loadgenCpuUsPerReq))),
        otherLoadCores: r1(median(list.map((r) => r.otherLoadCores))),
        bestCpuUsPerReq: list.length ? Math.min(...list.map((r) => r.cpuUsPerReq)) : NaN,
      },
      problems,
    };
  });
  return partial.map((p) => {
    const ceiling = partial.find((c) => c.id === p.ceiling);
    const ratio = (k: Metric) => (ceiling ? pairedRatio(p, ceiling, k) : NaN);
    return {
      ...p,
      ratioToCeiling: {
        reqPerSec: ratio('reqPerSec'),
        p50Ms: ratio('p50Ms'),
        p99Ms: ratio('p99Ms'),
        cpuUsPerReq: ratio('cpuUsPerReq'),
        peakRssMB: ratio('peakRssMB'),
      },
    };
  });
}

export function summariseBursts(
  bursts: readonly BurstScenario[],
  runs: ReadonlyMap<string, BurstMetrics[]>,
): BurstSummary[] {
  return bursts.map((b) => {
    const list = runs.get(b.id) ?? [];
    const issues: string[] = [];
    const statusCounts: Record<string, number> = {};
    for (const r of list) {
      for (const [k, v] of Object.entries(r.statusCounts)) statusCounts[k] = (statusCounts[k] ?? 0) + v;
      if (r.errors) issues.push(`round ${r.round}: ${r.errors} clients got no answer`);
      if (!r.bodiesMatchPayload)
        issues.push(
          `round ${r.round}: not every client got the payload (statuses ${JSON.stringify(r.statusCounts)}, ` +
            `${r.distinctBodies} distinct bodies)`,
        );
    }
    const calls = list.map((r) => r.upstreamCalls);
    return {
      id: b.id,
      title: b.title,
      server: b.server,
      clients: list[0]?.clients ?? 0,
      upstreamDelayMs: b.delayMs,
      runs: list,
      median: { upstreamCalls: median(calls), wallMs: r1(median(list.map((r) => r.wallMs))) },
      minUpstreamCalls: calls.length ? Math.min(...calls) : NaN,
      maxUpstreamCalls: calls.length ? Math.max(...calls) : NaN,
      statusCounts,
      problems: b.failuresAreFindings ? [] : issues,
      findings: b.failuresAreFindings ? issues : [],
    };
  });
}

const HIT_THRESHOLD = 0.01;

/** A comparison the report gives without a verdict. */
export interface FigureResult {
  id: string;
  figure: string;
  measured: string;
  note?: string;
}

const find = <T extends { id: string; runs: unknown[] }>(list: readonly T[], id: string) =>
  list.find((x) => x.id === id && x.runs.length > 0);

const notHit = (x: ScenarioSummary) =>
  x.median.upstreamCallsPerReq >= HIT_THRESHOLD
    ? `no cache hit in this build: ${x.median.upstreamCallsPerReq} upstream calls per request`
    : undefined;

/**
 * The performance guards, each judged on this run's numbers. They guard against a regression while the
 * code gets simpler; the other comparisons are figures without a verdict (`reportedFigures`).
 */
export function evaluateTargets(scenarios: ScenarioSummary[], bursts: BurstSummary[]): TargetResult[] {
  const s = (id: string) => find(scenarios, id);
  const out: TargetResult[] = [];
  const missing = (id: string, target: string) =>
    out.push({ id, target, measured: '–', met: null, note: 'scenario not run' });

  const hit = s('atrium-hit-2k');
  const ceil = s('ceiling-2k');
  const miss = s('atrium-miss-2k-0ms');
  const bare = s('bare-miss-2k-0ms');
  const view = s('atrium-view-hit-4x2k');

  const hitTarget = "Cache hit: server CPU per request ≤ 4 × the ceiling's";
  if (hit && ceil) {
    const cpu = pairedRatio(hit, ceil, 'cpuUsPerReq');
    const nh = notHit(hit);
    out.push({
      id: 'hit-cpu',
      target: hitTarget,
      measured: `${cpu} × (${hit.median.cpuUsPerReq} vs ${ceil.median.cpuUsPerReq} µs)`,
      met: cpu <= 4 && !nh,
      note: nh,
    });
  } else missing('hit-cpu', hitTarget);

  const missTarget = "Cache miss, 0 ms upstream: server CPU per request ≤ 5 × the bare proxy's";
  if (miss && bare) {
    const cpu = pairedRatio(miss, bare, 'cpuUsPerReq');
    out.push({
      id: 'miss-cpu',
      target: missTarget,
      measured: `${cpu} × (${miss.median.cpuUsPerReq} vs ${bare.median.cpuUsPerReq} µs)`,
      met: cpu <= 5,
    });
  } else missing('miss-cpu', missTarget);

  const viewTarget = 'View of 4 parts, every part a hit: server CPU per request ≤ 2.5 × one direct cache hit';
  if (view && hit) {
    const cpu = pairedRatio(view, hit, 'cpuUsPerReq');
    const nh = notHit(view) ?? notHit(hit);
    out.push({
      id: 'view-cpu',
      target: viewTarget,
      measured: `${cpu} × (${view.median.cpuUsPerReq} vs ${hit.median.cpuUsPerReq} µs)`,
      met: cpu <= 2.5 && !nh,
      note: nh,
    });
  } else missing('view-cpu', viewTarget);

  const memoryTarget = 'Peak RSS of Atrium under the hit scenarios ≤ 150 MB';
  const hits = [s('atrium-hit-2k'), s('atrium-hit-200k')].filter((x): x is ScenarioSummary => !!x);
  if (hits.length) {
    const peak = Math.max(...hits.map((x) => x.median.peakRssMB));
    out.push({ id: 'memory', target: memoryTarget, measured: `${peak} MB`, met: peak <= 150 });
  } else missing('memory', memoryTarget);

  const ab = find(bursts, 'atrium-burst');
  const nb = find(bursts, 'naive-burst');
  if (ab) {
    out.push({
      id: 'burst',
      target: `Coalesced burst: exactly 1 upstream call for ${ab.clients} clients on one cold key`,
      measured:
        `Atrium ${ab.minUpstreamCalls === ab.maxUpstreamCalls ? ab.minUpstreamCalls : `${ab.minUpstreamCalls}–${ab.maxUpstreamCalls}`}` +
        (nb ? `; naive proxy ${nb.minUpstreamCalls}–${nb.maxUpstreamCalls}` : ''),
      met: ab.maxUpstreamCalls === 1 && ab.minUpstreamCalls === 1 && ab.problems.length === 0,
    });
  } else missing('burst', 'Coalesced burst: exactly 1 upstream call for all clients on one cold key');

  // Behaviour, not speed: in cooldown the vendor is not called at all.
  const storm = s('atrium-storm-2k');
  if (storm) {
    const calls = storm.runs.reduce((a, r) => a + r.upstreamCalls, 0);
    const answers = storm.runs.reduce((a, r) => a + r.requests, 0);
    out.push({
      id: 'storm-calls',
      target: '429 storm: 0 upstream calls while in cooldown',
      measured: `${calls} upstream calls for ${answers} rejected requests`,
      met: calls === 0 && storm.problems.length === 0,
    });
  } else missing('storm-calls', '429 storm: 0 upstream calls while in cooldown');
  return out;
}

/** Comparisons reported beside the guards, with no verdict; a figure whose scenarios were not run is left out. */
export function reportedFigures(scenarios: ScenarioSummary[]): FigureResult[] {
  const s = (id: string) => find(scenarios, id);
  const out: FigureResult[] = [];
  const hit = s('atrium-hit-2k');
  const naiveHit = s('naive-hit-2k');
  const plain = s('atrium-hit-plain-2k');
  const miss = s('atrium-miss-2k-0ms');
  const naiveMiss = s('naive-miss-2k-0ms');
  const storm = s('atrium-storm-2k');

  if (hit && naiveHit) {
    const x = pairedRatio(hit, naiveHit, 'reqPerSec');
    out.push({
      id: 'hit-vs-naive',
      figure: "Cache hit: req/s, × the naive Nest proxy's hit path",
      measured: `${x} × (${hit.median.reqPerSec} vs ${naiveHit.median.reqPerSec} req/s)`,
      note: notHit(hit),
    });
  }
  if (hit && plain) {
    const cpu = pairedRatio(hit, plain, 'cpuUsPerReq');
    out.push({
      id: 'usage-cpu',
      figure: 'Cache hit: server CPU per request with usage counting and tracing (export off), × without',
      measured: `${cpu} × (${hit.median.cpuUsPerReq} vs ${plain.median.cpuUsPerReq} µs with usage off)`,
      note: notHit(hit) ?? notHit(plain),
    });
  }
  if (miss && naiveMiss) {
    const x = pairedRatio(miss, naiveMiss, 'reqPerSec');
    out.push({
      id: 'miss-vs-naive',
      figure: "Cache miss, 0 ms upstream: req/s, × the naive Nest proxy's miss path",
      measured: `${x} × (${miss.median.reqPerSec} vs ${naiveMiss.median.reqPerSec} req/s)`,
    });
  }
  if (storm && hit) {
    const x = pairedRatio(storm, hit, 'cpuUsPerReq');
    out.push({
      id: 'storm-cpu',
      figure: 'Gateway CPU per rejected request in a 429 storm, × its CPU per cache hit',
      measured: `${x} × (${storm.median.cpuUsPerReq} vs ${hit.median.cpuUsPerReq} µs)`,
      note: notHit(hit)
        ? 'compared with the hit scenario, which is not a cache hit in this build'
        : undefined,
    });
  }
  return out;
}

const fmt = (v: number, digits = 0) =>
  Number.isFinite(v)
    ? v.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits })
    : '–';

export function scenarioRows(scenarios: ScenarioSummary[]): string[][] {
  const x = (v: number) => (Number.isFinite(v) ? `${fmt(v, 2)}×` : '–');
  return scenarios.map((s) => [
    s.id,
    fmt(s.median.reqPerSec),
    x(s.ratioToCeiling.reqPerSec),
    fmt(s.median.p50Ms, 2),
    x(s.ratioToCeiling.p50Ms),
    fmt(s.median.p99Ms, 2),
    x(s.ratioToCeiling.p99Ms),
    fmt(s.median.cpuUsPerReq, 1),
    x(s.ratioToCeiling.cpuUsPerReq),
    fmt(s.median.peakRssMB, 0),
    x(s.ratioToCeiling.peakRssMB),
    s.kind === 'static' ? '–' : fmt(s.median.upstreamCallsPerReq, 3),
    s.problems.length ? 'NO' : 'yes',
  ]);
}

/** Every figure raw and as a ratio to the ceiling of the same body size in the same round. */
export const SCENARIO_HEADER = [
  'scenario',
  'req/s',
  'vs ceiling',
  'p50 ms',
  'vs ceiling',
  'p99 ms',
  'vs ceiling',
  'CPU µs/req',
  'vs ceiling',
  'peak RSS MB',
  'vs ceiling',
  'upstream calls/req',
  'clean',
];

/** Plain-text table for the terminal. */
export function textTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i]))).join('  ');
  return [line(header), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export function markdownTable(header: string[], rows: string[][], alignRight = true): string {
  const sep = header.map((_, i) => (i === 0 || !alignRight ? '---' : '---:'));
  return [header, sep, ...rows].map((r) => `| ${r.join(' | ')} |`).join('\n');
}

export function burstRows(bursts: BurstSummary[]): string[][] {
  return bursts.map((x) => [
    x.id,
    String(x.clients),
    `${x.upstreamDelayMs} ms`,
    x.minUpstreamCalls === x.maxUpstreamCalls
      ? String(x.minUpstreamCalls)
      : `${x.minUpstreamCalls}–${x.maxUpstreamCalls}`,
    fmt(x.median.wallMs, 0),
    x.problems.length ? 'NO' : 'yes',
  ]);
}

export const BURST_HEADER = [
  'burst',
  'clients',
  'upstream latency',
  'upstream calls (per round)',
  'wall ms',
  'clean',
];

export function targetRows(targets: TargetResult[]): string[][] {
  return targets.map((t) => [
    t.target,
    t.measured,
    t.met === null ? 'not run' : t.met ? 'met' : '**not met**',
    t.note ?? '',
  ]);
}

export const TARGET_HEADER = ['target', 'measured', 'verdict', 'note'];

export function figureRows(figures: FigureResult[]): string[][] {
  return figures.map((f) => [f.figure, f.measured, f.note ?? '']);
}

export const FIGURE_HEADER = ['figure (no verdict)', 'measured', 'note'];
