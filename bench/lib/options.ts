import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QUIET_LIMIT_CORES } from './quiet.js';

/** The repository root (this file compiles to dist-bench/bench/lib/options.js). */
export const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../../..');

export interface BenchOptions {
  /** Seconds of measured load per scenario and round. */
  readonly durationS: number;
  /** Seconds of unmeasured load per scenario before round 1 (JIT, keep-alive pools, cache fill). */
  readonly warmupS: number;
  readonly rounds: number;
  /** Pause between two measured runs. */
  readonly pauseMs: number;
  /** Concurrent keep-alive connections of the load generator. */
  readonly connections: number;
  /** Clients in the coalesced burst. */
  readonly burstClients: number;
  /** Scenario ids to run (prefix match); empty = all. */
  readonly only: readonly string[];
  /** Where latest.json and chart.svg go. */
  readonly outDir: string;
  /** Server ids started with `--cpu-prof` (profiles land in `<outDir>/profiles`). */
  readonly cpuProf: readonly string[];
  /** Server ids profiled with `perf record` during their measured runs (data in `<outDir>/perf`). */
  readonly perf: readonly string[];
  /** Keep the servers' log files (else deleted at the end). */
  readonly keepLogs: boolean;
  /** Passed to Atrium as REDIS_URL (unset: in-memory cache and throttle, one instance). */
  readonly redisUrl?: string;
  /** Extra environment for the Atrium processes (`BENCH_ATRIUM_ENV="A=1,B=2"`). */
  readonly atriumEnv: Readonly<Record<string, string>>;
  /** The Atrium entry point to run (default dist/main.js; another build to compare with). */
  readonly atriumMain: string;
  /** Cores others may keep busy on average before the figures are refused publication (default 0.3). */
  readonly maxOtherCores: number;
  /** Extra node flags for the Atrium processes (`BENCH_ATRIUM_NODE_ARGS="--trace-gc --max-semi-space-size=4"`). */
  readonly atriumNodeArgs: readonly string[];
  /** The fleet scenario (docs/performance.md "The fleet scenario"). */
  readonly fleet: FleetOptions;
}

export interface FleetOptions {
  /** TTL of a series answer in both fleets, seconds. */
  readonly ttlS: number;
  /** Seconds of traffic before the vendor cooldown. */
  readonly durationS: number;
  /** Seconds the vendor answers 429 (its Retry-After counts down from this) while the traffic goes on. */
  readonly cooldownS: number;
  readonly keys: number;
  readonly zipfS: number;
  readonly ratePerS: number;
  /** A release burst every this many seconds (0: none). */
  readonly burstEveryS: number;
  readonly burstClients: number;
  readonly consumers: number;
  readonly vendorDelayMs: number;
  /** Seconds of unmeasured requests (on other series) to each fleet first. */
  readonly warmupS: number;
  /** The Redis the Atrium replicas share (a unique prefix per run, deleted afterwards). */
  readonly redisUrl: string;
}

function num(env: NodeJS.ProcessEnv, name: string, def: number, min: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return def;
  const v = Number(raw);
  if (!Number.isFinite(v) || v < min) throw new Error(`${name} must be a number ≥ ${min}`);
  return v;
}

/** A numeric setting of a bench script from the process environment: `def` when unset. */
export function envNumber(name: string, def: number, min: number): number {
  return num(process.env, name, def, min);
}

function list(raw: string | undefined): string[] {
  return (raw ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
}

/** The knobs, all from the environment (docs/performance.md "Knobs" lists them). */
export function readOptions(env: NodeJS.ProcessEnv = process.env): BenchOptions {
  const atriumEnv: Record<string, string> = {};
  for (const pair of list(env.BENCH_ATRIUM_ENV)) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new Error('BENCH_ATRIUM_ENV must be NAME=value pairs separated by commas');
    atriumEnv[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return {
    durationS: num(env, 'BENCH_DURATION', 6, 1),
    warmupS: num(env, 'BENCH_WARMUP', 3, 0),
    rounds: Math.floor(num(env, 'BENCH_ROUNDS', 3, 1)),
    pauseMs: num(env, 'BENCH_PAUSE_MS', 500, 0),
    connections: Math.floor(num(env, 'BENCH_CONNECTIONS', 50, 1)),
    burstClients: Math.floor(num(env, 'BENCH_BURST_CLIENTS', 1000, 1)),
    only: list(env.BENCH_SCENARIOS),
    outDir: resolve(ROOT, env.BENCH_OUT || 'bench/results'),
    cpuProf: list(env.BENCH_CPU_PROF),
    perf: list(env.BENCH_PERF),
    keepLogs: env.BENCH_KEEP_LOGS === '1',
    redisUrl: env.BENCH_REDIS_URL || undefined,
    atriumEnv,
    atriumMain: resolve(ROOT, env.BENCH_ATRIUM_MAIN || 'dist/main.js'),
    maxOtherCores: num(env, 'BENCH_MAX_OTHER_CORES', QUIET_LIMIT_CORES, 0),
    atriumNodeArgs: (env.BENCH_ATRIUM_NODE_ARGS ?? '').split(/\s+/).filter(Boolean),
    fleet: {
      ttlS: Math.floor(num(env, 'BENCH_FLEET_TTL', 10, 1)),
      durationS: num(env, 'BENCH_FLEET_DURATION', 60, 1),
      cooldownS: Math.floor(num(env, 'BENCH_FLEET_COOLDOWN', 20, 1)),
      keys: Math.floor(num(env, 'BENCH_FLEET_KEYS', 3000, 1)),
      zipfS: num(env, 'BENCH_FLEET_ZIPF', 1.1, 0),
      ratePerS: num(env, 'BENCH_FLEET_RATE', 300, 1),
      burstEveryS: num(env, 'BENCH_FLEET_BURST_EVERY', 15, 0),
      burstClients: Math.floor(num(env, 'BENCH_FLEET_BURST_CLIENTS', 300, 1)),
      consumers: Math.floor(num(env, 'BENCH_FLEET_CONSUMERS', 20, 1)),
      vendorDelayMs: num(env, 'BENCH_FLEET_VENDOR_DELAY_MS', 30, 0),
      warmupS: num(env, 'BENCH_FLEET_WARMUP', 5, 0),
      redisUrl: env.BENCH_FLEET_REDIS_URL || env.BENCH_REDIS_URL || 'redis://127.0.0.1:6379',
    },
  };
}
