import type { DestinationStream } from 'pino';
import { FdDestination } from './fd-destination.js';

let override: DestinationStream | undefined;
let stdout: FdDestination | undefined;

/**
 * Where a gateway's logs go when main.ts did not hand it a logger: stdout, or the stream a test harness
 * installed (the Jest setup routes every in-process gateway's log into a capture file, so one run of the
 * whole suite can be scanned for keys).
 */
export function defaultLogDestination(): DestinationStream {
  return override ?? stdoutDestination();
}

/**
 * Asynchronous stdout (fd-destination.ts): a log line never waits on the terminal. One per process, so
 * every logger's lines share one order; what is still pending is written synchronously on exit.
 */
function stdoutDestination(): FdDestination {
  if (!stdout) {
    const dest = new FdDestination({
      fd: 1,
      onError: (err) => process.stderr.write(`atrium: writing the log to stdout failed: ${err.message}\n`),
    });
    process.once('exit', () => dest.flushSync());
    stdout = dest;
  }
  return stdout;
}

/** Test seam: route the default destination elsewhere (undefined restores stdout). */
export function overrideDefaultLogDestination(destination: DestinationStream | undefined): void {
  override = destination;
}
