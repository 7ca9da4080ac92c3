import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cleanEnv } from '../helpers/gateway.js';

const ROOT = resolve(__dirname, '../..');

/**
 * One fast run of the benchmark harness itself (1 s per scenario, one round, a few scenarios), so it cannot
 * rot. It checks the shape of what the bench writes and that the figures are real measurements; it asserts
 * nothing about how fast anything is (the bench itself judges the targets).
 */
// dist/ and dist-bench/ are built by the tier's global setup (test/support/build.global-setup.ts).
describe('bench harness (smoke)', () => {
  const out = mkdtempSync(join(tmpdir(), 'atrium-bench-smoke-'));
  let exitCode: number | null = null;
  let output = '';

  beforeAll(async () => {
    // The developer's own BENCH_* settings must not change what the smoke run does.
    const env = cleanEnv({});
    for (const k of Object.keys(env)) if (k.startsWith('BENCH_')) delete env[k];
    Object.assign(env, {
      BENCH_DURATION: '1',
      BENCH_WARMUP: '0',
      BENCH_ROUNDS: '1',
      BENCH_PAUSE_MS: '100',
      BENCH_CONNECTIONS: '10',
      BENCH_BURST_CLIENTS: '50',
      BENCH_SCENARIOS: 'bare-miss-2k-0ms,atrium-miss-2k-0ms,atrium-burst',
      BENCH_OUT: out,
    });
    const child = spawn(process.execPath, ['dist-bench/bench/run.js'], { cwd: ROOT, env });
    child.stdout.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr.on('data', (d: Buffer) => (output += d.toString()));
    exitCode = await new Promise<number | null>((res) => child.once('exit', (code) => res(code)));
  }, 170_000);

  afterAll(() => rmSync(out, { recursive: true, force: true }));

  it('finishes cleanly and writes results, chart and summary', () => {
    if (exitCode !== 0) throw new Error(`bench exited with ${exitCode}:\n${output}`);
    expect(existsSync(join(out, 'latest.json'))).toBe(true);
    expect(readFileSync(join(out, 'chart.svg'), 'utf8')).toMatch(
      /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"/,
    );
    expect(readFileSync(join(out, 'summary.md'), 'utf8')).toContain('| atrium-miss-2k-0ms |');
  });

  it('measures every selected scenario with positive figures, the ceiling included', () => {
    const result = JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8'));
    expect(result.schema).toBe(1);
    expect(result.machine.cpuModel).toEqual(expect.any(String));
    expect(result.machine.clkTck).toBeGreaterThan(0);
    expect(result.payloads['2k'].bytes).toBeGreaterThan(1500);
    expect(result.payloads['200k'].bytes).toBeGreaterThan(150_000);
    const ids = result.scenarios.map((s: { id: string }) => s.id);
    expect(ids).toEqual(['ceiling-2k', 'bare-miss-2k-0ms', 'atrium-miss-2k-0ms']);
    for (const s of result.scenarios) {
      expect(s.check).toMatchObject({ status: 200, md5Match: true, ok: true });
      expect(s.problems).toEqual([]);
      expect(s.runs).toHaveLength(1);
      const run = s.runs[0];
      expect(run.requests).toBeGreaterThan(0);
      expect(run.errors).toBe(0);
      expect(run.unexpected).toBe(0);
      expect(run.statusCounts['200']).toBe(run.requests);
      for (const k of ['reqPerSec', 'p50Ms', 'p99Ms', 'cpuUsPerReq', 'peakRssMB'])
        expect(run[k]).toBeGreaterThan(0);
      expect(run.p99Ms).toBeGreaterThanOrEqual(run.p50Ms);
      for (const k of ['reqPerSec', 'p50Ms', 'p99Ms', 'cpuUsPerReq', 'peakRssMB']) {
        expect(s.median[k]).toBe(run[k]);
        expect(s.ratioToCeiling[k]).toBeGreaterThan(0);
      }
    }
    const [ceiling, bare, atrium] = result.scenarios;
    expect(ceiling.ratioToCeiling.reqPerSec).toBe(1);
    expect(ceiling.runs[0].upstreamCalls).toBe(0);
    // Unique keys: every proxied request reached the fake (in-flight ones at the stop may add a few).
    for (const s of [bare, atrium]) expect(s.runs[0].upstreamCallsPerReq).toBeGreaterThanOrEqual(1);
  });

  it('counts the burst’s upstream calls and checks every client got the payload', () => {
    const result = JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8'));
    expect(result.bursts).toHaveLength(1);
    const [burst] = result.bursts;
    expect(burst.id).toBe('atrium-burst');
    expect(burst.runs[0]).toMatchObject({
      clients: 50,
      statusCounts: { '200': 50 },
      bodiesMatchPayload: true,
      errors: 0,
    });
    expect(burst.runs[0].upstreamCalls).toBeGreaterThanOrEqual(1);
    expect(burst.runs[0].upstreamCalls).toBeLessThanOrEqual(50);
    // The judged guards, exactly; those whose scenarios this run left out are reported as not run.
    const verdicts = Object.fromEntries(
      result.targets.map((t: { id: string; met: boolean | null }) => [t.id, t.met]),
    );
    expect(Object.keys(verdicts)).toEqual([
      'hit-cpu',
      'miss-cpu',
      'view-cpu',
      'memory',
      'burst',
      'storm-calls',
    ]);
    for (const id of ['miss-cpu', 'burst']) expect(typeof verdicts[id]).toBe('boolean');
    for (const id of ['hit-cpu', 'view-cpu', 'memory', 'storm-calls']) expect(verdicts[id]).toBeNull();
    // Comparisons without a verdict need scenarios this run left out (the naive proxy, the plain hit).
    expect(result.figures).toEqual([]);
  });

  it('records how busy other processes kept the cores, and says whether the run was quiet', () => {
    const result = JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8'));
    expect(result.background).toEqual({
      meanOtherCores: expect.any(Number),
      maxOtherCores: expect.any(Number),
      limitCores: 0.3,
      quiet: result.background.meanOtherCores <= 0.3,
    });
    expect(result.background.maxOtherCores).toBeGreaterThanOrEqual(result.background.meanOtherCores);
    expect(output).toMatch(/other processes kept [\d.]+ cores busy on average/);
  });
});
