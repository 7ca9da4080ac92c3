// The entry point. It is started as `node --max-semi-space-size=4 dist/main.js` (package.json's start, the
// Dockerfile): V8's young generation otherwise grows to 32 MiB, a fifth of the process's memory, mostly
// garbage of requests in flight.
import { runGateway } from './gateway.js';

runGateway(() => undefined);
