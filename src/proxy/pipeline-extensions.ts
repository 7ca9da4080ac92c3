import type { Stage } from './pipeline.types.js';
import type { UpstreamLimitStageOptions } from './stages/upstream-limit.stage.js';

// Extension points of the pipeline that modules above proxy/ fill in (tracing, usage): the proxy owns the
// interfaces and tokens, so it never imports those modules; their modules provide the tokens.

/** What the pipeline needs of tracing. */
export const TRACING_STAGES = Symbol('TracingStages');

export interface TracingStages {
  /** Puts `traceparent` on each vendor attempt (and records its span when exporting). */
  vendorStage(upstream: string): Stage;
  /** The limit stage's options with the budget wait as a span (unchanged when not exporting). */
  limitOptions(limit: UpstreamLimitStageOptions, upstream: string): UpstreamLimitStageOptions;
}

/** What the pipeline needs of usage counting. */
export const USAGE_STAGES = Symbol('UsageStages');

export interface UsageStages {
  /** The vendor-call counting stage of an upstream's pipeline (undefined when counting is off). */
  vendorStage(upstream: string): Stage | undefined;
  /** The limit stage's options with shield refusals counted (unchanged when counting is off). */
  limitOptions(limit: UpstreamLimitStageOptions, upstream: string): UpstreamLimitStageOptions;
}
