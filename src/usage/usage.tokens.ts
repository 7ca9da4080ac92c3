import type { UpstreamLimitStageOptions } from '../proxy/limits/upstream-limit.stage.js';
import type { Stage } from '../proxy/pipeline.types.js';

/** The clock of usage days and flushes (tests may provide a fake one). */
export const USAGE_CLOCK = Symbol('UsageClock');
/** What the pipeline factory needs of usage counting (a token, so proxy/ does not import the service). */
export const USAGE_STAGES = Symbol('UsageStages');

export interface UsageStages {
  /** The vendor-call counting stage of an upstream's pipeline (undefined when counting is off). */
  vendorStage(upstream: string): Stage | undefined;
  /** The limit stage's options with shield refusals counted (unchanged when counting is off). */
  limitOptions(limit: UpstreamLimitStageOptions, upstream: string): UpstreamLimitStageOptions;
}
