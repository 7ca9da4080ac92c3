// The entry point (`node dist/main.js`). V8's young generation is held at its initial size before the
// gateway's modules load (they load with the import below, not before this line runs), and grows to its
// cap once the server listens: core/runtime/young-generation.ts.
import { holdYoungGeneration, youngGenerationMb } from './core/runtime/young-generation.js';

const youngGeneration = holdYoungGeneration(youngGenerationMb(process.env));

void import('./gateway.js').then(({ runGateway }) => runGateway(() => youngGeneration.release()));
