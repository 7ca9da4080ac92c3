import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { CounterName, SuiteResults } from '../helpers/results.js';

const ROOT = resolve(__dirname, '../..');
const RESULTS_DIR_ENV = 'ATRIUM_HARDENING_RESULTS_DIR';
const SUITES = ['faults', 'fleet', 'fuzz', 'leaks', 'failover', 'database'] as const;

interface Row {
  label: string;
  value: string;
  target: string;
  ok: boolean | undefined;
}

function sum(results: SuiteResults[], name: CounterName): number | undefined {
  let total: number | undefined;
  for (const r of results) {
    const v = r.counters[name];
    if (typeof v === 'number') total = (total ?? 0) + v;
  }
  return total;
}

const fmt = (n: number | undefined): string => (n === undefined ? 'not run' : n.toLocaleString('en-US'));

/** The summary table of the hardening tier, from the suites' figures (missing suites show "not run"). */
export function summaryRows(results: SuiteResults[]): Row[] {
  const c = (n: CounterName) => sum(results, n);
  const ratio = (a: CounterName, b: CounterName): Row['value'] =>
    c(b) === undefined ? 'not run' : `${fmt(c(a))} / ${fmt(c(b))}`;
  const zero = (label: string, n: CounterName): Row => ({
    label,
    value: fmt(c(n)),
    target: '0',
    ok: c(n) === undefined ? undefined : c(n) === 0,
  });
  const all = (a: CounterName, b: CounterName) =>
    c(b) === undefined ? undefined : c(a) === c(b) && (c(b) ?? 0) > 0;
  return [
    {
      label: 'fault cases survived / total',
      value: ratio('faultCasesSurvived', 'faultCasesTotal'),
      target: 'all',
      ok: all('faultCasesSurvived', 'faultCasesTotal'),
    },
    {
      label: 'fleet cases survived / total',
      value: ratio('fleetCasesSurvived', 'fleetCasesTotal'),
      target: 'all',
      ok: all('fleetCasesSurvived', 'fleetCasesTotal'),
    },
    {
      label: 'fuzz inputs tried',
      value: fmt(c('fuzzInputs')),
      target: '≥ 10,000',
      ok: c('fuzzInputs') === undefined ? undefined : (c('fuzzInputs') ?? 0) >= 10_000,
    },
    zero('5xx from the gateway', 'gateway5xx'),
    zero('upstream calls for invalid input', 'upstreamCallsForInvalidInput'),
    zero('consumer credentials reaching a vendor', 'consumerCredentialsAtVendor'),
    zero('duplicated vendor writes', 'duplicatedVendorWrites'),
    zero('secrets found in any form', 'secretsFound'),
    zero('secrets found in any escaping', 'secretsFoundInAnyEscaping'),
    zero('gateway keys reaching a vendor in any field', 'gatewayKeysAtVendor'),
    zero('errors outside the envelope', 'errorsOutsideEnvelope'),
    zero('answers past their deadline', 'answersPastDeadline'),
    {
      label: 'Redis and database faults survived / total',
      value: ratio('stateFaultsSurvived', 'stateFaultsTotal'),
      target: 'all',
      ok: all('stateFaultsSurvived', 'stateFaultsTotal'),
    },
    zero('vendor calls over the fleet budget during a Redis fault', 'vendorCallsOverBudgetInFault'),
    zero('consumers, keys or usage rows lost to a fault', 'stateRowsLost'),
    zero('faults after which the fleet shared state later than 5 s', 'faultsSharedAfter5s'),
  ];
}

export function renderTable(rows: Row[]): string {
  const lines = ['| measure | result | target |', '|---|---|---|'];
  for (const r of rows) lines.push(`| ${r.label} | ${r.value}${r.ok === false ? ' ✗' : ''} | ${r.target} |`);
  return lines.join('\n');
}

function gitHead(): string | undefined {
  try {
    return execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: ROOT, encoding: 'utf8' }).trim();
  } catch {
    return undefined;
  }
}

/**
 * Prints the tier's summary table after the run. When the tier ran on its own (`npm run test:hardening`)
 * and every suite reported, it also writes the table with the suites' details to
 * bench/results/hardening.json; ATRIUM_HARDENING_OUT names another file and writes whatever ran (a full
 * `npm test` prints the table and leaves the committed file alone). The run's log scan is the root
 * config's global teardown.
 */
export default function globalTeardown(global: { selectProjects?: string[] } = {}): void {
  const dir = process.env[RESULTS_DIR_ENV];
  if (!dir || !existsSync(dir)) return;
  const results: SuiteResults[] = readdirSync(dir)
    .filter((n) => n.endsWith('.json'))
    .map((n) => JSON.parse(readFileSync(join(dir, n), 'utf8')) as SuiteResults);
  rmSync(dir, { recursive: true, force: true });
  if (results.length === 0) return;
  const rows = summaryRows(results);
  const table = renderTable(rows);
  const failed = results.flatMap((r) =>
    (r.cases ?? [])
      .filter((k) => !k.survived)
      .map((k) => `  ${r.suite}: ${k.name}: ${k.failures.slice(0, 4).join('; ')}`),
  );
  process.stdout.write(
    `\nHardening summary (${results.map((r) => r.suite).join(', ')}):\n\n${table}\n` +
      (failed.length ? `\nCases that did not survive:\n${failed.join('\n')}\n` : ''),
  );
  const complete = SUITES.every((s) => results.some((r) => r.suite === s));
  // `npm run test:hardening`: the tier, with the fleet and postgres tiers' state-fault suites beside it.
  // scripts/jest-tier.mjs names the tiers it selected (Jest's own globalConfig does not carry them here).
  const sel = global.selectProjects ?? process.env.JEST_TIERS?.split(',') ?? [];
  const alone = sel.includes('hardening') && sel.every((p) => ['hardening', 'fleet', 'postgres'].includes(p));
  const out = process.env.ATRIUM_HARDENING_OUT ?? join(ROOT, 'bench/results/hardening.json');
  if (!process.env.ATRIUM_HARDENING_OUT && !(complete && alone)) {
    process.stdout.write(
      `(${complete ? 'not the tier alone' : 'not every suite ran'}: bench/results/hardening.json left alone)\n`,
    );
    return;
  }
  mkdirSync(resolve(out, '..'), { recursive: true });
  const doc = {
    commit: gitHead(),
    at: new Date().toISOString(),
    rows: rows.map(({ label, value, target, ok }) => ({ label, value, target, ok })),
    table,
    suites: results,
  };
  writeFileSync(out, JSON.stringify(doc, null, 2) + '\n');
  process.stdout.write(`(written to ${out})\n`);
}
