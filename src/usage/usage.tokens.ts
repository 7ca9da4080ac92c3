// The pipeline's usage extension point lives in proxy/ (pipeline-extensions.ts); UsageModule provides it.
export { USAGE_STAGES, type UsageStages } from '../proxy/pipeline-extensions.js';

/** The clock of usage days and flushes (tests may provide a fake one). */
export const USAGE_CLOCK = Symbol('UsageClock');
