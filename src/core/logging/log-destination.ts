import { pino, type DestinationStream } from 'pino';

let override: DestinationStream | undefined;
let stdout: DestinationStream | undefined;

/** Bytes that may wait for a slow stdout before lines are dropped. */
const MAX_PENDING_BYTES = 16 * 1024 * 1024;

/**
 * Where a gateway's logs go when main.ts did not hand it a logger: stdout, or the stream a test harness
 * installed (the Jest setup routes every in-process gateway's log into a capture file, so one run of the
 * whole suite can be scanned for keys).
 */
export function defaultLogDestination(): DestinationStream {
  return override ?? stdoutDestination();
}

/** Lines are written in chunks of this many bytes at least, or after FLUSH_EVERY_MS when fewer are waiting. */
const MIN_WRITE_BYTES = 4096;
const FLUSH_EVERY_MS = 100;

/**
 * pino's asynchronous stdout, buffered as pino's documentation on asynchronous logging shows: a log line
 * never waits on the terminal, a busy gateway writes many lines per write, a quiet one's lines appear within
 * FLUSH_EVERY_MS, and pino writes what is still pending synchronously on exit. One per process, so every
 * logger's lines share one order. A stalled reader may let up to 16 MB wait; lines beyond are dropped and
 * their count is logged once stdout takes lines again.
 */
function stdoutDestination(): DestinationStream {
  if (!stdout) {
    const dest = pino.destination({
      dest: 1,
      sync: false,
      minLength: MIN_WRITE_BYTES,
      periodicFlush: FLUSH_EVERY_MS,
      maxLength: MAX_PENDING_BYTES,
    });
    let failing = false;
    let dropped = 0;
    // Said once per spell of failures (a closed stdout must not flood stderr); pino already drops on EPIPE.
    dest.on('error', (err: Error) => {
      if (!failing) process.stderr.write(`atrium: writing the log to stdout failed: ${err.message}\n`);
      failing = true;
    });
    dest.on('drop', () => dropped++);
    dest.on('drain', () => {
      failing = false;
      if (dropped === 0) return;
      dest.write(
        `{"level":"warn","time":${Date.now()},"msg":"log lines dropped: the log destination was too slow","dropped":${dropped}}\n`,
      );
      dropped = 0;
    });
    stdout = dest;
  }
  return stdout;
}

/** Test seam: route the default destination elsewhere (undefined restores stdout). */
export function overrideDefaultLogDestination(destination: DestinationStream | undefined): void {
  override = destination;
}
