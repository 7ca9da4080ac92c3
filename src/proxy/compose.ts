import type { Handler, Stage } from './pipeline.types.js';

/** stages[0] is the outermost. Composed once per upstream at start-up, never per request. */
export function compose(stages: readonly Stage[], terminal: Handler): Handler {
  return stages.reduceRight<Handler>((next, stage) => stage(next), terminal);
}
