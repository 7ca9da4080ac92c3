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
