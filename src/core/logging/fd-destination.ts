import { write as fsWrite, writeSync } from 'node:fs';
import type { DestinationStream } from 'pino';

export interface FdDestinationOptions {
  /** The file descriptor written to (1: stdout). */
  readonly fd: number;
  /** Size of each of the two buffers lines are copied into. */
  readonly chunkBytes?: number;
  /** Bytes that may wait while the descriptor is slow; lines beyond are dropped and counted. */
  readonly maxPendingBytes?: number;
  /** A write starts once this many bytes wait… */
  readonly flushBytes?: number;
  /** …or this long after the first of them (a line lands within it). */
  readonly flushMs?: number;
  /** Waits before writing again after EAGAIN (a non-blocking pipe that is full). */
  readonly retryMs?: number;
  /**
   * Told of a write error other than EAGAIN (the lines of that write are lost): once per spell of failures,
   * not once per write, so a closed stdout does not flood stderr.
   */
  readonly onError?: (err: NodeJS.ErrnoException) => void;
}

const DEFAULT_CHUNK = 64 * 1024;
const DEFAULT_MAX_PENDING = 16 * 1024 * 1024;
const DEFAULT_FLUSH_BYTES = 16 * 1024;
const DEFAULT_FLUSH_MS = 50;

/**
 * The gateway's log destination: lines are copied into one of two preallocated buffers and written to the
 * descriptor asynchronously (libuv's thread pool), so a line never waits on the terminal or the log
 * collector. A write starts when 16 KB wait or 50 ms after the first line, whichever comes first: each write
 * hands the bytes to a pool thread and back, which cost a cache hit about a tenth of its CPU when it was done
 * every event-loop turn (a few lines each) at 20,000 requests a second.
 *
 * Why not pino's own asynchronous destination (sonic-boom): it keeps each string it is handed until its
 * write completes. Under load those strings outlived two scavenges and V8 promoted them, about 9 MB a
 * second at 23,000 cache hits a second: the old generation grew between full collections (the process's
 * peak RSS 150–160 MB instead of 130 MB) and the hit paid a tenth of its CPU for it. Here a line's string
 * dies as soon as its bytes are copied; the buffers live for the life of the process.
 *
 * While a write is in flight, new lines go to the other buffer, which grows (up to `maxPendingBytes`) when a
 * slow reader lets lines pile up and shrinks back after. Lines beyond that bound are dropped and counted
 * (`dropped`), and the count is written as a line of its own once the descriptor catches up: memory stays
 * bounded and the loss is said.
 */
export class FdDestination implements DestinationStream {
  /**
   * Lines are copied into a buffer here and written in batches: a writer that joins its lines per turn to
   * spare the destination per-line work (request-log.ts) need not, as each line costs one copy.
   */
  readonly gathers = true;
  private readonly fd: number;
  private readonly chunkBytes: number;
  private readonly maxPending: number;
  private readonly retryMs: number;
  private readonly flushBytes: number;
  private readonly flushMs: number;
  private timer: NodeJS.Timeout | undefined;
  private readonly onError: (err: NodeJS.ErrnoException) => void;
  private failing = false;
  /** Where new lines are copied. */
  private active: Buffer;
  private used = 0;
  /** The buffer not in use, ready to become active (undefined while it is being written). */
  private spare: Buffer | undefined;
  private writing = false;
  private scheduled = false;
  private droppedSinceReport = 0;
  private droppedTotal = 0;
  private readonly idleWaiters: ((err?: Error) => void)[] = [];

  constructor(opts: FdDestinationOptions) {
    if (!Number.isInteger(opts.fd) || opts.fd < 0) throw new Error('FdDestination: fd must be a descriptor');
    this.fd = opts.fd;
    this.chunkBytes = opts.chunkBytes ?? DEFAULT_CHUNK;
    this.maxPending = opts.maxPendingBytes ?? DEFAULT_MAX_PENDING;
    if (!(this.chunkBytes >= 256 && this.maxPending >= this.chunkBytes))
      throw new Error('FdDestination: chunkBytes ≥ 256 and maxPendingBytes ≥ chunkBytes');
    this.retryMs = opts.retryMs ?? 5;
    this.flushBytes = Math.min(opts.flushBytes ?? DEFAULT_FLUSH_BYTES, this.chunkBytes);
    this.flushMs = opts.flushMs ?? DEFAULT_FLUSH_MS;
    this.onError = opts.onError ?? (() => undefined);
    this.active = Buffer.allocUnsafeSlow(this.chunkBytes);
    this.spare = Buffer.allocUnsafeSlow(this.chunkBytes);
  }

  /** Lines dropped because more than `maxPendingBytes` were waiting. */
  get dropped(): number {
    return this.droppedTotal;
  }

  write(line: string): boolean {
    // At most 3 bytes per UTF-16 code unit: most lines need no measuring.
    if (this.used + line.length * 3 > this.active.length) {
      const bytes = Buffer.byteLength(line);
      if (this.used + bytes > this.active.length && !this.makeRoom(bytes)) {
        this.droppedSinceReport++;
        this.droppedTotal++;
        return false;
      }
    }
    this.used += this.active.write(line, this.used);
    this.schedule();
    return true;
  }

  /** Starts a write soon when enough waits (or someone waits for it), else within `flushMs`. */
  private schedule(): void {
    if (this.writing) return; // the write in flight schedules the next one when it completes
    if (this.used >= this.flushBytes || (this.idleWaiters.length > 0 && this.used > 0)) {
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(this.flushPending);
      }
    } else if ((this.used > 0 || this.droppedSinceReport > 0) && this.timer === undefined) {
      this.timer = setTimeout(this.flushPending, this.flushMs);
      this.timer.unref(); // never keeps the process alive: exit writes what is pending
    }
  }

  /** Calls back once everything written so far has reached the descriptor (pino's `logger.flush(cb)`). */
  flush(cb?: (err?: Error) => void): void {
    if (cb) this.idleWaiters.push(cb);
    this.flushPending();
    this.settleIfIdle();
  }

  /**
   * Writes what is pending synchronously (exit paths). A write already in flight cannot be waited for
   * here; it was handed to the kernel's queue first, so its lines normally still land first.
   */
  flushSync(): void {
    this.reportDrops();
    let off = 0;
    while (off < this.used) {
      try {
        off += writeSync(this.fd, this.active, off, this.used - off);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'EAGAIN') continue;
        break;
      }
    }
    this.used = 0;
  }

  private readonly flushPending = (): void => {
    this.scheduled = false;
    if (this.timer !== undefined) {
      clearTimeout(this.timer);
      this.timer = undefined;
    }
    if (this.writing) return; // the write in flight starts the next one
    this.reportDrops();
    if (this.used === 0) return;
    const buf = this.active;
    const len = this.used;
    this.active = this.spare ?? Buffer.allocUnsafeSlow(this.chunkBytes);
    this.spare = undefined;
    this.used = 0;
    this.writing = true;
    this.writeOut(buf, 0, len);
  };

  private writeOut(buf: Buffer, off: number, len: number): void {
    fsWrite(this.fd, buf, off, len - off, null, (err, n) => {
      if (err) {
        if (err.code === 'EAGAIN') {
          setTimeout(() => this.writeOut(buf, off, len), this.retryMs).unref();
          return;
        }
        if (!this.failing) this.onError(err);
        this.failing = true;
        this.written(buf);
        return;
      }
      this.failing = false;
      if (off + n < len) this.writeOut(buf, off + n, len);
      else this.written(buf);
    });
  }

  private written(buf: Buffer): void {
    this.writing = false;
    // A buffer grown for a burst is let go: the pair returns to its normal size.
    if (buf.length === this.chunkBytes && this.spare === undefined) this.spare = buf;
    if (this.idleWaiters.length > 0) this.flushPending();
    else this.schedule();
    this.settleIfIdle();
  }

  /** Room for `bytes` more in the active buffer: a bigger one while a write is in flight, within bounds. */
  private makeRoom(bytes: number): boolean {
    const needed = this.used + bytes;
    if (needed > this.maxPending) return false;
    let size = this.active.length;
    while (size < needed) size *= 2;
    const bigger = Buffer.allocUnsafeSlow(Math.min(size, this.maxPending));
    this.active.copy(bigger, 0, 0, this.used);
    this.active = bigger;
    return true;
  }

  /** Appends the count of dropped lines as a line of its own, when it fits (else at the next write). */
  private reportDrops(): void {
    if (this.droppedSinceReport === 0) return;
    const line = `{"level":"warn","time":${Date.now()},"msg":"log lines dropped: the log destination was too slow","dropped":${this.droppedSinceReport}}\n`;
    if (this.used + Buffer.byteLength(line) > this.active.length) return;
    this.used += this.active.write(line, this.used);
    this.droppedSinceReport = 0;
  }

  private settleIfIdle(): void {
    if (this.writing || this.used > 0 || this.idleWaiters.length === 0) return;
    const waiters = this.idleWaiters.splice(0);
    for (const w of waiters) w();
  }
}
