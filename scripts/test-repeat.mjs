#!/usr/bin/env node
// Proof of stability: runs a tier or some test files n times and counts the runs that passed.
//   npm run test:repeat -- <tier | path or pattern> <n> [extra jest args]
//   npm run test:repeat -- test/upstreams 10
//   npm run test:repeat -- limits 10          (a path pattern, as `jest limits`)
//   npm run test:repeat -- unit 5             (a tier name selects that Jest project)
// Prints one line per run and, at the end, "N passed, M failed" over the runs (exit 1 if any failed).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const TIERS = new Set(['unit', 'e2e', 'redis', 'fleet', 'browser', 'bench-smoke', 'hardening']);
const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');

const [target, countArg, ...extra] = process.argv.slice(2);
const runs = Number(countArg);
if (!target || !Number.isInteger(runs) || runs < 1) {
  console.error('usage: npm run test:repeat -- <tier | path or pattern> <n> [extra jest args]');
  process.exit(2);
}

const selection = TIERS.has(target) ? ['--selectProjects', target] : [target];
const dir = mkdtempSync(join(tmpdir(), 'atrium-test-repeat-'));
const jest = join(ROOT, 'node_modules/jest/bin/jest.js');
let passedRuns = 0;
let failedRuns = 0;
const failures = new Map();
const started = Date.now();

for (let i = 1; i <= runs; i++) {
  const out = join(dir, `run-${i}.json`);
  const t0 = Date.now();
  const r = spawnSync(
    process.execPath,
    [jest, ...selection, '--ci', '--silent', '--json', `--outputFile=${out}`, ...extra],
    {
      cwd: ROOT,
      stdio: ['ignore', 'ignore', 'pipe'],
      encoding: 'utf8',
      maxBuffer: 256 * 1024 * 1024,
    },
  );
  let summary = 'no results';
  let ok = false;
  try {
    const res = JSON.parse(readFileSync(out, 'utf8'));
    const failed = res.numFailedTests + res.numRuntimeErrorTestSuites;
    ok = r.status === 0 && failed === 0 && res.numTotalTests > 0;
    summary = `${res.numPassedTests} tests passed, ${failed} failed in ${res.numTotalTestSuites} suites`;
    for (const suite of res.testResults)
      for (const t of suite.assertionResults ?? [])
        if (t.status === 'failed') failures.set(t.fullName, (failures.get(t.fullName) ?? 0) + 1);
    if (res.numRuntimeErrorTestSuites > 0)
      for (const suite of res.testResults)
        if (suite.testExecError || (suite.status === 'failed' && !(suite.assertionResults ?? []).length))
          failures.set(`suite ${suite.name}`, (failures.get(`suite ${suite.name}`) ?? 0) + 1);
  } catch {
    summary = `jest exited with ${r.status}; stderr tail:\n${(r.stderr ?? '').slice(-2000)}`;
  }
  if (ok) passedRuns++;
  else failedRuns++;
  console.log(
    `run ${i}/${runs}: ${ok ? 'passed' : 'FAILED'} (${summary}, ${((Date.now() - t0) / 1000).toFixed(1)} s)`,
  );
}
rmSync(dir, { recursive: true, force: true });

if (failures.size) {
  console.log('\nfailed tests (runs failed in):');
  for (const [name, n] of failures) console.log(`  ${n} × ${name}`);
}
console.log(`\n${target} × ${runs} in ${((Date.now() - started) / 1000).toFixed(0)} s`);
console.log(`${passedRuns} passed, ${failedRuns} failed`);
process.exit(failedRuns === 0 ? 0 : 1);
