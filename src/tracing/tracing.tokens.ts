// The pipeline's tracing extension point lives in proxy/ (pipeline-extensions.ts); TracingModule provides it.
export { TRACING_STAGES, type TracingStages } from '../proxy/pipeline-extensions.js';
