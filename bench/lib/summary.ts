import { readFileSync, writeFileSync } from 'node:fs';
import {
  BURST_HEADER,
  burstRows,
  FIGURE_HEADER,
  figureRows,
  markdownTable,
  median,
  SCENARIO_HEADER,
  scenarioRows,
  TARGET_HEADER,
  targetRows,
  type BurstSummary,
  type FigureResult,
  type ScenarioSummary,
  type TargetResult,
} from './report.js';
import type { MachineInfo } from './procfs.js';
import { FLEET_HEADER, fleetRows } from './fleet-report.js';
import type { FleetRun } from './fleet-run.js';
import type { HitBesideNginx } from './fleet-report.js';

export interface SummaryInput {
  machine: MachineInfo;
  startedAt: string;
  commit: string;
  rounds: number;
  durationS: number;
  connections: number;
  scenarios: ScenarioSummary[];
  bursts: BurstSummary[];
  targets: TargetResult[];
  /** Comparisons without a verdict, after the guards. */
  figures: FigureResult[];
  problems: string[];
  findings: string[];
  fleet?: FleetRun;
  hitBesideNginx?: string;
  /** Why nginx was not measured. */
  nginxSkipped?: string;
  /** How steady the host's speed was over the rounds (quiet.ts). */
  steadiness?: string;
}

/** The measured part of docs/performance.md (also written as results/summary.md). */
export function summaryMarkdown(x: SummaryInput): string {
  const m = x.machine;
  const others = x.scenarios.flatMap((s) => s.runs.map((r) => r.otherLoadCores));
  const shared = others.length
    ? ` Other processes on the machine kept a median of ${median(others).toFixed(1)} of its ${m.cpuCount} ` +
      `cores busy during the measured runs (up to ${Math.max(...others).toFixed(1)}).`
    : '';
  const lines = [
    `Measured ${x.startedAt.slice(0, 16).replace('T', ' ')} UTC at commit \`${x.commit}\` on ${m.cpuModel} ` +
      `(${m.cpuId ? `${m.cpuId}, ` : ''}${m.cpuCount} vCPUs${m.cpuMHz ? `, ${m.cpuMHz} MHz` : ''}), Linux ${m.kernel}, Node ${m.node}; ` +
      `load average at start ${m.loadAverageAtStart.join(' / ')}. ${x.rounds} interleaved rounds × ${x.durationS} s ` +
      `per scenario, ${x.connections} connections, medians; ratios are to the ceiling of the same body size in the ` +
      'same round.' +
      shared +
      (x.steadiness ? ` On the host: ${x.steadiness}.` : ''),
    '',
    markdownTable(SCENARIO_HEADER, scenarioRows(x.scenarios)),
    '',
  ];
  if (x.bursts.length) lines.push(markdownTable(BURST_HEADER, burstRows(x.bursts)), '');
  if (x.hitBesideNginx) lines.push(x.hitBesideNginx + '.', '');
  if (x.nginxSkipped) lines.push(`**nginx was not measured** (${x.nginxSkipped}).`, '');
  if (x.fleet?.results.length) {
    const f = x.fleet.settings;
    const t = x.fleet.traffic;
    lines.push(
      `Fleet scenario: ${t.requests} requests (${t.mainRequests} before the cooldown) over ${t.distinctSeries} series ` +
        `(${t.distinctUrls} distinct URLs), Zipf s = ${f.zipfS} over ${f.keys}, ${f.ratePerS}/s with ${t.bursts} release ` +
        `bursts of ${f.burstClients} clients within 5 ms; TTL ${f.ttlS} s, vendor latency ${f.vendorDelayMs} ms, ` +
        `then ${f.cooldownS} s of 429 from the vendor; other processes kept ` +
        `${x.fleet.results.map((r) => `${r.otherLoadCores} (${r.fleet})`).join(' and ')} cores busy. ` +
        'Chart: [fleet.svg](../bench/results/fleet.svg).',
      '',
      markdownTable(FLEET_HEADER, fleetRows(x.fleet.results)),
      '',
    );
  }
  lines.push(markdownTable(TARGET_HEADER, targetRows(x.targets), false), '');
  if (x.figures.length) lines.push(markdownTable(FIGURE_HEADER, figureRows(x.figures), false), '');
  if (x.findings.length)
    lines.push('Baseline failures in this run:', '', ...x.findings.map((f) => `- ${f}`), '');
  if (x.problems.length) lines.push('Problems in this run:', '', ...x.problems.map((p) => `- ${p}`), '');
  return lines.join('\n');
}

/** Where `npm run bench` writes its results block (relative to the repository root). */
export const PERFORMANCE_DOC = 'docs/performance.md';
/** The results block lies between these two lines. */
export const RESULTS_START = '<!-- bench:results:start (written by npm run bench) -->';
export const RESULTS_END = '<!-- bench:results:end -->';

/** Replaces the block between two marker lines in a Markdown file; false when the markers are missing. */
export function updateBlock(path: string, start: string, end: string, markdown: string): boolean {
  const text = readFileSync(path, 'utf8');
  const a = text.indexOf(start);
  const b = text.indexOf(end);
  if (a < 0 || b < a) return false;
  writeFileSync(path, text.slice(0, a + start.length) + '\n' + markdown + '\n' + text.slice(b));
  return true;
}

export function updateResultsBlock(path: string, markdown: string): boolean {
  return updateBlock(path, RESULTS_START, RESULTS_END, '\n' + markdown);
}

/** README.md's headline figures lie between these two lines (rewritten by a published full run). */
export const HEADLINE_START = '<!-- bench:headline:start (written by npm run bench) -->';
export const HEADLINE_END = '<!-- bench:headline:end -->';

/** The README's few headline figures: the fleet's vendor calls, the cooldown, the hit beside nginx's. */
export function headlineMarkdown(x: {
  startedAt: string;
  machine: MachineInfo;
  fleet?: FleetRun;
  hit?: HitBesideNginx;
  /** Cores other processes kept busy on average during the run. */
  otherCores: number;
}): string | undefined {
  const a = x.fleet?.results.find((r) => r.fleet === 'atrium');
  if (!a) return undefined;
  const n = x.fleet?.results.find((r) => r.fleet === 'nginx');
  const f = x.fleet!.settings;
  const parts = [
    `On the same recorded traffic (Zipf over ${f.keys.toLocaleString('en-US')} series, release bursts of ` +
      `${f.burstClients}, four spellings of each request, TTL ${f.ttlS} s), three Atrium replicas sharing ` +
      `Redis called the vendor **${a.main.callsPerMinimum} ×** the minimum the traffic allows` +
      (n ? `; three nginx \`proxy_cache\` nodes **${n.main.callsPerMinimum} ×**.` : '.'),
    `While the vendor answered 429 for ${f.cooldownS} s, Atrium sent it ${a.cooldown.vendorCallsAfterDiscovery} ` +
      `calls after the first refusal's 250 ms` +
      (n ? ` (nginx ${n.cooldown.vendorCallsAfterDiscovery})` : '') +
      ` and answered ${(a.cooldown.servedShare * 100).toFixed(0)} % of requests from its cache.`,
  ];
  if (x.hit)
    parts.push(
      `A cache hit costs Atrium ${x.hit.ratio} × nginx's CPU: it authenticates, throttles, counts and logs; ` +
        'nginx does none of that.',
    );
  parts.push(
    `Measured ${x.startedAt.slice(0, 10)} on ${x.machine.cpuCount} vCPUs (other processes kept ` +
      `${x.otherCores} cores busy); method and every figure in ` +
      '[docs/performance.md](docs/performance.md).',
  );
  return parts.join(' ');
}
