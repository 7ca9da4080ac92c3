// Runs fake upstreams in their own process: see sandbox/fake-cli.ts for the arguments and the JSON line it
// prints. The kinds are the upstreams of the index that declare a fake.
import { runFakeCli } from './sandbox/fake-cli.js';
import { UPSTREAMS } from './upstreams/index.js';

runFakeCli(UPSTREAMS, process.argv.slice(2)).then(
  (running) => {
    const stop = (): void => {
      running.close().then(
        () => process.exit(0),
        () => process.exit(1),
      );
    };
    process.once('SIGTERM', stop);
    process.once('SIGINT', stop);
  },
  (err: unknown) => {
    process.stderr.write(`${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(2);
  },
);
