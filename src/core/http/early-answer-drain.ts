import type { IncomingMessage } from 'node:http';

export interface DrainBounds {
  /** Bytes of the unread body read and dropped at most. */
  readonly maxBytes: number;
  /** How long the body may keep coming. */
  readonly maxMs: number;
  /** Once a bound is passed: how long the connection is still read (our side shut) before it is closed. */
  readonly lingerMs: number;
}

/** 16 MiB or 5 s of a refused body, then a second of grace after our FIN. */
export const DEFAULT_DRAIN_BOUNDS: DrainBounds = {
  maxBytes: 16 * 1024 * 1024,
  maxMs: 5_000,
  lingerMs: 1_000,
};

/**
 * Whether part of a body the request declared is still unread. A request without `Content-Length` or
 * `Transfer-Encoding` has no body (RFC 9112 §6.3): answered from its route handler it is not yet `complete`
 * (the parser finishes the message after the handler returns), but there is nothing to drain.
 */
export function bodyPending(raw: IncomingMessage): boolean {
  if (raw.complete || raw.destroyed) return false;
  const h = raw.headers;
  const length = h['content-length'];
  return h['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * After an error answered before its request body was read (a 413 for a body over the limit): reads the rest
 * of the body and drops it, so a client still writing gets to read the answer instead of a reset (closing a
 * socket with unread data sends an RST, which can destroy the answer in the client's buffer). A body that ends
 * within the bounds leaves the connection usable for the next request. Past a bound, our side is shut (FIN)
 * and the connection is still read for `lingerMs`, then closed.
 */
export function drainAfterEarlyAnswer(
  raw: IncomingMessage,
  bounds: DrainBounds = DEFAULT_DRAIN_BOUNDS,
): void {
  if (!bodyPending(raw)) return;
  const socket = raw.socket;
  let seen = 0;
  const stop = (): void => {
    clearTimeout(timer);
    raw.off('data', onData);
  };
  const shut = (): void => {
    stop();
    // Keep reading (and dropping) what is on its way; the socket allows half-open connections.
    raw.on('data', () => undefined);
    socket.end();
    const linger = setTimeout(() => socket.destroy(), bounds.lingerMs);
    linger.unref();
    socket.once('close', () => clearTimeout(linger));
  };
  const onData = (chunk: Buffer): void => {
    seen += chunk.length;
    if (seen > bounds.maxBytes) shut();
  };
  const timer = setTimeout(shut, bounds.maxMs);
  timer.unref();
  raw.on('data', onData);
  raw.once('end', stop);
  raw.once('close', stop);
  raw.resume();
}
