import type { Handler, Stage } from './pipeline.types.js';

/** stages[0] is the outermost. Composed once per upstream at start-up, never per request. */
export function compose(stages: readonly Stage[], terminal: Handler): Handler {
  let handler = terminal;
  for (let i = stages.length - 1; i >= 0; i--) handler = stages[i](handler);
  return handler;
}
