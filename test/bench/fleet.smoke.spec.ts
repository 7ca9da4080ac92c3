import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { cleanEnv } from '../helpers/gateway.js';
import { describeNeeding, TEST_REDIS_URL } from '../helpers/system-parts.js';

const ROOT = resolve(__dirname, '../..');

/** One run of `node dist-bench/bench/run.js` with only these BENCH_* settings (the developer's are dropped). */
async function runBench(settings: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const env = cleanEnv({});
  for (const k of Object.keys(env)) if (k.startsWith('BENCH_')) delete env[k];
  Object.assign(env, settings);
  const child = spawn(process.execPath, ['dist-bench/bench/run.js'], { cwd: ROOT, env });
  let output = '';
  child.stdout.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr.on('data', (d: Buffer) => (output += d.toString()));
  const code = await new Promise<number | null>((res) => child.once('exit', (c) => res(c)));
  return { code, output };
}

interface Phase {
  requests: number;
  statusCounts: Record<string, number>;
  errors: number;
}

/**
 * The fleet scenario in a few seconds of traffic: it runs, replays the same requests to each fleet and
 * counts what the vendor got. No figure is judged here (the bench judges its targets on a quiet machine).
 */
// dist/ and dist-bench/ are built by the tier's global setup (test/support/build.global-setup.ts).
describeNeeding('redis', 'bench fleet scenario (smoke)', () => {
  const out = mkdtempSync(join(tmpdir(), 'atrium-bench-fleet-'));
  let run: { code: number | null; output: string };
  let result: {
    fleet: {
      traffic: { requests: number; mainRequests: number; distinctSeries: number; distinctUrls: number };
      results: Array<{
        fleet: string;
        nodes: number;
        main: Phase & {
          vendorCalls: number;
          minimum: number;
          minimumByUrl: number;
          callsPerMinimum: number;
          cpuUsPerReq: number;
        };
        cooldown: Phase & {
          vendorCalls: number;
          vendorCallsAfterDiscovery: number;
          servedShare: number;
          refusals: number;
          refusalsWithoutRetryAfter: number;
        };
        callsPerSecond: number[];
      }>;
    };
    targets: Array<{ id: string; met: boolean | null }>;
  };

  beforeAll(async () => {
    run = await runBench({
      BENCH_SCENARIOS: 'fleet',
      BENCH_FLEET_DURATION: '3',
      BENCH_FLEET_COOLDOWN: '2',
      BENCH_FLEET_TTL: '1',
      BENCH_FLEET_RATE: '50',
      BENCH_FLEET_KEYS: '100',
      BENCH_FLEET_BURST_EVERY: '2',
      BENCH_FLEET_BURST_CLIENTS: '50',
      BENCH_FLEET_CONSUMERS: '5',
      BENCH_FLEET_WARMUP: '1',
      BENCH_FLEET_REDIS_URL: TEST_REDIS_URL,
      BENCH_OUT: out,
    });
    if (run.code === 0) result = JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8'));
  }, 170_000);

  afterAll(() => rmSync(out, { recursive: true, force: true }));

  const fleetOf = (name: string) => result.fleet.results.find((r) => r.fleet === name)!;

  /** Every request of the traffic is accounted for, and the vendor's calls are counted and timed. */
  function expectCounted(name: string): void {
    const r = fleetOf(name);
    const t = result.fleet.traffic;
    expect(r.nodes).toBe(3);
    expect(r.main.requests).toBe(t.mainRequests);
    expect(r.cooldown.requests).toBe(t.requests - t.mainRequests);
    for (const phase of [r.main, r.cooldown]) {
      const answered = Object.values(phase.statusCounts).reduce((a, b) => a + b, 0);
      expect(answered + phase.errors).toBe(phase.requests);
    }
    expect(r.cooldown.refusals).toBe(
      r.cooldown.requests - r.cooldown.errors - (r.cooldown.statusCounts['200'] ?? 0),
    );
    expect(r.main.vendorCalls).toBeGreaterThan(0);
    const timed = r.callsPerSecond.reduce((a, b) => a + b, 0);
    expect(timed).toBeGreaterThanOrEqual(r.main.vendorCalls + r.cooldown.vendorCalls);
    expect(r.main.minimum).toBe(fleetOf('atrium').main.minimum);
    expect(r.main.callsPerMinimum).toBeCloseTo(r.main.vendorCalls / r.main.minimum, 2);
    expect(r.main.cpuUsPerReq).toBeGreaterThan(0);
  }

  it('finishes cleanly and writes the results and the fleet chart', () => {
    if (run.code !== 0) throw new Error(`bench exited with ${run.code}:\n${run.output}`);
    expect(readFileSync(join(out, 'fleet.svg'), 'utf8')).toMatch(
      /^<svg [^>]*xmlns="http:\/\/www\.w3\.org\/2000\/svg"[\s\S]*<polyline/,
    );
    expect(readFileSync(join(out, 'summary.md'), 'utf8')).toContain('| atrium |');
  });

  it('replays the traffic to three Atrium replicas and counts the vendor calls, the minimum and the cooldown', () => {
    const t = result.fleet.traffic;
    expect(t.mainRequests).toBeGreaterThan(0);
    expect(t.requests).toBeGreaterThan(t.mainRequests);
    // The spellings make more URLs than series: the minimum counts series, a URL-keyed cache URLs.
    expect(t.distinctUrls).toBeGreaterThan(t.distinctSeries);
    const a = fleetOf('atrium');
    expect(a.main.minimum).toBeGreaterThanOrEqual(t.distinctSeries);
    expect(a.main.minimumByUrl).toBeGreaterThan(a.main.minimum);
    expectCounted('atrium');
    const ids = result.targets.map((x) => x.id);
    expect(ids).toEqual(
      expect.arrayContaining(['fleet-calls', 'cooldown-calls', 'cooldown-p99', 'cooldown-retry-after']),
    );
  });

  describeNeeding('nginx', 'beside nginx proxy_cache', () => {
    it('replays the same traffic to three nginx nodes and counts their vendor calls', () => {
      expect(existsSync(join(out, 'latest.json'))).toBe(true);
      expectCounted('nginx');
    });
  });
});

describe('bench without nginx', () => {
  it('skips the nginx peer with one loud line and still measures the rest', async () => {
    const out = mkdtempSync(join(tmpdir(), 'atrium-bench-nonginx-'));
    try {
      const run = await runBench({
        BENCH_NGINX: 'off',
        BENCH_SCENARIOS: 'nginx-hit',
        BENCH_DURATION: '1',
        BENCH_WARMUP: '0',
        BENCH_ROUNDS: '1',
        BENCH_CONNECTIONS: '5',
        BENCH_OUT: out,
      });
      if (run.code !== 0) throw new Error(`bench exited with ${run.code}:\n${run.output}`);
      expect(run.output.match(/NGINX PEER SKIPPED/g)).toHaveLength(1);
      const result = JSON.parse(readFileSync(join(out, 'latest.json'), 'utf8'));
      expect(result.nginx).toEqual({ skipped: 'BENCH_NGINX=off' });
      expect(result.scenarios.map((s: { id: string }) => s.id)).toEqual(['ceiling-2k']);
      expect(result.scenarios[0].runs[0].requests).toBeGreaterThan(0);
    } finally {
      rmSync(out, { recursive: true, force: true });
    }
  }, 60_000);
});
