import { pino, type DestinationStream } from 'pino';

let override: DestinationStream | undefined;

/**
 * Where a gateway's logs go when main.ts did not hand it a logger: stdout, or the stream a test harness
 * installed (the Jest setup routes every in-process gateway's log into a capture file, so one run of the
 * whole suite can be scanned for keys).
 */
export function defaultLogDestination(): DestinationStream {
  // Asynchronous stdout: a log line never waits on the terminal; pino flushes it on exit.
  return override ?? pino.destination({ dest: 1, sync: false });
}

/** Test seam: route the default destination elsewhere (undefined restores stdout). */
export function overrideDefaultLogDestination(destination: DestinationStream | undefined): void {
  override = destination;
}
