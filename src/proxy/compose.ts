import type { EntryHandler, EntryStage, Handler, Stage } from './pipeline.types.js';

/** stages[0] is the outermost. Composed once per upstream at start-up, never per request. */
export function compose(stages: readonly Stage[], terminal: Handler): Handler;
/** An entry stage outermost (one that may return an error it decided at once): so does the result. */
export function compose(stages: readonly [EntryStage, ...Stage[]], terminal: Handler): EntryHandler;
export function compose(stages: readonly EntryStage[], terminal: Handler): EntryHandler {
  let handler: EntryHandler = terminal;
  // Every stage but the first is a Stage (the overloads say so): only the outermost may return an error.
  for (let i = stages.length - 1; i >= 0; i--) handler = stages[i](handler as Handler);
  return handler;
}
