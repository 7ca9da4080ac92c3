/**
 * How busy processes outside the bench kept the cores while it measured. The machine is shared: CPU used
 * by others inflates every server's latency and flatters every ratio, so figures from a busy run are
 * printed but never published (bench/results and docs/performance.md keep the last quiet run's).
 */
export interface BackgroundLoad {
  /** Mean cores kept busy by others over all measured runs (weighted by their wall time). */
  readonly meanOtherCores: number;
  /** The busiest single run. */
  readonly maxOtherCores: number;
  /** The most the mean may be for a run to be published. */
  readonly limitCores: number;
  readonly quiet: boolean;
}

/** The default limit: others may keep at most 0.3 of a core busy on average. */
export const QUIET_LIMIT_CORES = 0.3;

export function backgroundLoad(
  runs: ReadonlyArray<{ readonly otherLoadCores: number; readonly wallS: number }>,
  limitCores = QUIET_LIMIT_CORES,
): BackgroundLoad {
  let busy = 0;
  let wall = 0;
  let max = 0;
  for (const r of runs) {
    busy += r.otherLoadCores * r.wallS;
    wall += r.wallS;
    max = Math.max(max, r.otherLoadCores);
  }
  const mean = wall > 0 ? busy / wall : 0;
  const round2 = (v: number) => Math.round(v * 100) / 100;
  return {
    meanOtherCores: round2(mean),
    maxOtherCores: round2(max),
    limitCores,
    quiet: mean <= limitCores,
  };
}

/**
 * How steady the host was: the ceiling does the same work every round, so its CPU per request moving
 * between rounds means the machine's own speed moved (a shared host, a VM's neighbours). Others' load
 * does not show it. A slower host slows the gateway more than the ceiling (each answer's write waits
 * longer on the client's wake-up), so ratios of an unsteady run compare poorly with another run's.
 */
export interface HostSteadiness {
  /** The ceiling's CPU per request over the rounds, µs (the lowest and the highest round). */
  readonly minUs: number;
  readonly maxUs: number;
  /** Highest over lowest. */
  readonly spread: number;
  readonly limit: number;
  readonly steady: boolean;
}

/** The default limit: the ceiling's CPU per request may move by a quarter between rounds. */
export const STEADY_LIMIT = 1.25;

/** Undefined when no ceiling ran in two rounds or more (nothing to compare). */
export function hostSteadiness(
  ceilingCpuUsPerRound: readonly number[],
  limit = STEADY_LIMIT,
): HostSteadiness | undefined {
  const cpu = ceilingCpuUsPerRound.filter((v) => Number.isFinite(v) && v > 0);
  if (cpu.length < 2) return undefined;
  const minUs = Math.min(...cpu);
  const maxUs = Math.max(...cpu);
  const spread = Math.round((maxUs / minUs) * 100) / 100;
  return { minUs, maxUs, spread, limit, steady: spread <= limit };
}

/** One line for the runner's output and the published summary. */
export function steadinessLine(s: HostSteadiness): string {
  const range = `${s.minUs.toFixed(1)}–${s.maxUs.toFixed(1)} µs (${s.spread.toFixed(2)} ×; limit ${s.limit} ×)`;
  return s.steady
    ? `the ceiling's CPU per request held at ${range} across rounds: a steady host`
    : `UNSTEADY HOST: the ceiling's CPU per request moved ${range} across rounds; ` +
        'ratios from this run compare poorly with those of another run';
}
