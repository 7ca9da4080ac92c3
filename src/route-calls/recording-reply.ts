import { Readable } from 'node:stream';
import type { RouteCallResult } from './route-caller.js';

type HeaderValue = string | string[] | number;

/**
 * What an in-process route call answers into: the part of Fastify's reply that the proxy route, the quota,
 * the exception filter and the response hooks use (status, headers, one send), recorded instead of written
 * to a socket. `answer` is the answer as a direct call would have received it, once sent; `done` settles
 * with it (made only when someone waits: a cache hit is answered before the call returns).
 */
export class RecordingReply {
  statusCode = 200;
  sent = false;
  /** Set once the answer is complete. */
  answer?: RouteCallResult;
  private readonly headers: Record<string, HeaderValue> = {};
  private readonly started = performance.now();
  private finishedAt?: number;
  private waiting?: Promise<RouteCallResult>;
  private settle?: (r: RouteCallResult) => void;

  /** Settles with the answer (at once if it is already complete). */
  get done(): Promise<RouteCallResult> {
    if (!this.waiting)
      this.waiting = this.answer
        ? Promise.resolve(this.answer)
        : new Promise((resolve) => (this.settle = resolve));
    return this.waiting;
  }

  /** Milliseconds from the call's start to its answer (Fastify's `reply.elapsedTime`). */
  get elapsedTime(): number {
    return (this.finishedAt ?? performance.now()) - this.started;
  }

  code(status: number): this {
    this.statusCode = status;
    return this;
  }

  status(status: number): this {
    return this.code(status);
  }

  header(name: string, value: HeaderValue): this {
    // As Node writes them: a number is sent, and read back by a client, as text.
    this.headers[name.toLowerCase()] = typeof value === 'number' ? String(value) : value;
    return this;
  }

  getHeader(name: string): HeaderValue | undefined {
    return this.headers[name.toLowerCase()];
  }

  removeHeader(name: string): this {
    delete this.headers[name.toLowerCase()];
    return this;
  }

  /** The one answer: bytes at once, a stream (a file route) once it has been read whole. */
  send(body?: Buffer | string | Readable | null): this {
    if (this.sent) return this;
    this.sent = true;
    if (body instanceof Readable) {
      const chunks: Buffer[] = [];
      body.on('data', (c: Buffer | string) => chunks.push(typeof c === 'string' ? Buffer.from(c) : c));
      // A stream that breaks off leaves what arrived, as a client reading the socket would have it.
      const end = () => this.finish(Buffer.concat(chunks));
      body.once('end', end);
      body.once('error', end);
      return this;
    }
    this.finish(
      body === undefined || body === null
        ? Buffer.alloc(0)
        : Buffer.isBuffer(body)
          ? body
          : Buffer.from(body),
    );
    return this;
  }

  private finish(body: Buffer): void {
    if (this.finishedAt !== undefined) return;
    this.finishedAt = performance.now();
    const headers = this.headers;
    if (!('content-length' in headers) && !('transfer-encoding' in headers))
      headers['content-length'] = body.length;
    this.answer = { status: this.statusCode, headers, body };
    this.settle?.(this.answer);
  }
}
