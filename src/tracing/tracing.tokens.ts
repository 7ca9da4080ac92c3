import type { UpstreamLimitStageOptions } from '../proxy/limits/upstream-limit.stage.js';
import type { Stage } from '../proxy/pipeline.types.js';

/** What the pipeline factory needs of tracing (a token, so proxy/ does not import the service). */
export const TRACING_STAGES = Symbol('TracingStages');

export interface TracingStages {
  /** Puts `traceparent` on each vendor attempt (and records its span when exporting). */
  vendorStage(upstream: string): Stage;
  /** The limit stage's options with the budget wait as a span (unchanged when not exporting). */
  limitOptions(limit: UpstreamLimitStageOptions, upstream: string): UpstreamLimitStageOptions;
}
