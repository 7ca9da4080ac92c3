import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { Pool, type Dispatcher } from 'undici';
import { GatewayError } from '../../core/errors/gateway-error.js';
import { stringifyQuery } from '../../core/http/query-string.js';
import type { Handler, ProxyRequest, ProxyResponse } from '../pipeline.types.js';
import { transportError, transportFailureOf } from './transport-errors.js';

export interface TransportOptions {
  /** Upstream name, for error details. */
  readonly upstream: string;
  /** Human name for messages: "the macroeconomic data service". */
  readonly title: string;
  /** Base URL, may carry a path (`https://api.example.com/v2`). */
  readonly baseUrl: string;
  readonly connections: number;
  readonly keepAliveTimeoutMs: number;
  readonly connectTimeoutMs: number;
  /** Backstop only: the call's own deadline (`ProxyRequest.deadline`) is what bounds a call. */
  readonly headersTimeoutMs: number;
  /** Longest gap between two body chunks: after its first chunk, a streamed file has only this bound. */
  readonly bodyTimeoutMs: number;
  /** Cap on a buffered answer, enforced while reading. File routes stream without it. */
  readonly maxResponseBytes: number;
}

/** Answer headers a client may need; everything else (hop-by-hop, cookies, server banners) stays behind. */
const PASS_HEADERS = ['content-type', 'content-disposition', 'content-language', 'etag', 'last-modified'];
/** Headers the normaliser reads on errors. */
const ERROR_HEADERS = ['retry-after', 'x-ratelimit-reset', 'ratelimit-reset', 'x-rate-limit-reset'];

export interface TransportResponse extends ProxyResponse {
  /** Rate-limit headers kept for the normaliser (not sent to clients). */
  upstreamHeaders: Record<string, string>;
}

function validate(o: TransportOptions): URL {
  let url: URL;
  try {
    url = new URL(o.baseUrl);
  } catch {
    throw new Error(`transport ${o.upstream}: base URL is not a URL`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new Error(`transport ${o.upstream}: base URL must be http or https`);
  if (url.search || url.hash || url.username || url.password)
    throw new Error(`transport ${o.upstream}: base URL must not carry a query, fragment or credentials`);
  for (const k of [
    'connections',
    'connectTimeoutMs',
    'headersTimeoutMs',
    'bodyTimeoutMs',
    'maxResponseBytes',
  ] as const)
    if (!(o[k] > 0)) throw new Error(`transport ${o.upstream}: ${k} must be > 0`);
  return url;
}

/**
 * The last stage: one undici Pool per upstream (keep-alive), a size cap enforced while reading, streaming for
 * file routes. Transport failures become typed errors here (refused/reset → 503, timeout → 504,
 * oversize/broken body → 502).
 *
 * Buffered answers go through `pool.dispatch` with a handler that collects the chunks (BufferedCall): no
 * Readable, no async iterator. File routes use `pool.request` and hand its body stream on.
 *
 * Deadline (a route's timeout bounds the whole call, body included): one timer of our own per call, armed at `req.deadline`, aborts the undici
 * request (through the dispatch controller, or the `signal` of a streamed call), which closes the socket. undici's per-phase timeouts are no total (its
 * `bodyTimeout` bounds the gap between chunks, so a trickling body never ends) and fire up to ~0.5 s late
 * (coarse timers); they stay only as backstops. A buffered answer must be complete by the deadline:
 * connect, headers and the whole body. A streamed file must have sent its headers and first chunk by then
 * (so a stalled vendor still gets a clean 504); after that the download may take as long as it keeps moving,
 * bounded by `bodyTimeoutMs` between chunks (a stall then cuts the client's connection: its 200 is sent).
 */
export class UndiciTransport {
  private readonly pool: Pool;
  private readonly basePath: string;
  private readonly capitalTitle: string;
  readonly handler: Handler;

  constructor(private readonly opts: TransportOptions) {
    const url = validate(opts);
    this.basePath = url.pathname.replace(/\/+$/, '');
    this.capitalTitle = capitalise(opts.title);
    this.pool = new Pool(url.origin, {
      connections: opts.connections,
      keepAliveTimeout: opts.keepAliveTimeoutMs,
      connect: { timeout: opts.connectTimeoutMs },
      headersTimeout: opts.headersTimeoutMs,
      bodyTimeout: opts.bodyTimeoutMs,
    });
    this.handler = (req) => this.send(req);
  }

  /** Whether a TCP connection to the upstream can be opened now (readiness; spends no quota). */
  get origin(): string {
    return new URL(this.opts.baseUrl).origin;
  }

  async close(): Promise<void> {
    await this.pool.close();
  }

  private send(req: ProxyRequest): Promise<TransportResponse> {
    const qs = stringifyQuery(req.query);
    const path = this.basePath + req.path + (qs ? '?' + qs : '');
    const remaining = req.deadline - Date.now();
    if (remaining <= 0) return Promise.reject(this.timeout());
    return req.route.file ? this.sendStreamed(req, path, remaining) : this.sendBuffered(req, path, remaining);
  }

  /**
   * A buffered answer on `dispatch`: a handler object collects the chunks and settles one promise, so an
   * answer costs no Readable, no async iterator and no parsed header object (only the allow-listed
   * headers are decoded).
   */
  private sendBuffered(req: ProxyRequest, path: string, remaining: number): Promise<TransportResponse> {
    return new Promise<TransportResponse>((resolve, reject) => {
      const call = new BufferedCall(this, resolve, reject, remaining);
      this.pool.dispatch(
        {
          method: req.method,
          path,
          headers: req.headers,
          body: req.body,
          headersTimeout: this.opts.headersTimeoutMs,
          bodyTimeout: this.opts.bodyTimeoutMs,
          // No redirect interceptor: a 3xx comes back as an answer and the normaliser makes it an error.
        },
        call,
      );
    });
  }

  /** A file route: a 2xx streams to the client once its first chunk is here; anything else is buffered. */
  private async sendStreamed(req: ProxyRequest, path: string, remaining: number): Promise<TransportResponse> {
    const started = performance.now();
    // Aborting with our own error makes undici reject (or destroy the body) with exactly that error.
    const abort = new AbortController();
    const timer = setTimeout(() => abort.abort(this.timeout()), remaining);
    let res: Dispatcher.ResponseData;
    try {
      res = await this.pool.request({
        method: req.method,
        path,
        headers: req.headers,
        body: req.body,
        signal: abort.signal,
        headersTimeout: this.opts.headersTimeoutMs,
        bodyTimeout: this.opts.bodyTimeoutMs,
      });
    } catch (err) {
      clearTimeout(timer);
      throw this.classify(err);
    }
    const headers: Record<string, string> = {};
    for (const name of PASS_HEADERS) {
      const v = res.headers[name];
      if (v !== undefined) headers[name] = Array.isArray(v) ? v.join(', ') : v;
    }
    const upstreamHeaders: Record<string, string> = {};
    for (const name of ERROR_HEADERS) {
      const v = res.headers[name];
      if (v !== undefined) upstreamHeaders[name] = Array.isArray(v) ? v[0] : v;
    }
    if (res.statusCode >= 200 && res.statusCode < 300) {
      try {
        await firstChunk(res.body);
      } catch (err) {
        throw this.classify(err);
      } finally {
        clearTimeout(timer);
      }
      const len = res.headers['content-length'];
      if (typeof len === 'string') headers['content-length'] = len;
      return {
        status: res.statusCode,
        headers,
        body: res.body,
        upstreamHeaders,
        upstreamMs: performance.now() - started,
      };
    }
    let body: Buffer;
    try {
      body = await this.readCapped(res);
    } finally {
      clearTimeout(timer);
    }
    return {
      status: res.statusCode,
      headers,
      body,
      upstreamHeaders,
      upstreamMs: performance.now() - started,
    };
  }

  /** The error body of a file route (small: capped like any buffered answer). */
  private async readCapped(res: Dispatcher.ResponseData): Promise<Buffer> {
    const cap = this.opts.maxResponseBytes;
    const declared = Number(res.headers['content-length']);
    if (declared > cap) {
      res.body.destroy();
      throw this.tooLarge();
    }
    const chunks: Buffer[] = [];
    let size = 0;
    try {
      for await (const chunk of res.body) {
        const buf = chunk as Buffer;
        size += buf.length;
        if (size > cap) {
          res.body.destroy();
          throw this.tooLarge();
        }
        chunks.push(buf);
      }
    } catch (err) {
      if (err instanceof GatewayError) throw err;
      throw this.classify(err);
    }
    return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
  }

  /** @internal for BufferedCall */
  get maxResponseBytes(): number {
    return this.opts.maxResponseBytes;
  }

  /** @internal */
  tooLarge(): GatewayError {
    return transportError(
      'tooLarge',
      this.opts.upstream,
      `The answer of ${this.opts.title} is over the gateway's ${this.opts.maxResponseBytes}-byte limit; ` +
        'narrow the request (paging, filters or a shorter date range): the same request fails the same way.',
    );
  }

  /** @internal */
  timeout(cause?: unknown): GatewayError {
    return transportError(
      'timeout',
      this.opts.upstream,
      `${this.capitalTitle} did not answer in time.`,
      cause,
    );
  }

  /** The transport-error taxonomy (transport-errors.ts) with this upstream's words. @internal */
  classify(err: unknown): GatewayError {
    if (err instanceof GatewayError) return err;
    const failure = transportFailureOf(err);
    if (failure === 'timeout') return this.timeout(err);
    if (failure === 'tooLarge') return this.tooLarge();
    return transportError(
      failure,
      this.opts.upstream,
      failure === 'badBody'
        ? `${this.capitalTitle} sent a broken answer.`
        : `${this.capitalTitle} could not be reached.`,
      err,
    );
  }
}

/**
 * One buffered call, as an undici dispatch handler. Settles exactly once: with the whole answer, or with a
 * typed error (our deadline, the size cap, or the transport failure).
 */
class BufferedCall implements Dispatcher.DispatchHandler {
  private readonly started = performance.now();
  private readonly timer: NodeJS.Timeout;
  private controller: Dispatcher.DispatchController | undefined;
  private failure: GatewayError | undefined;
  private settled = false;
  private status = 0;
  private headers: Record<string, string> = {};
  private upstreamHeaders: Record<string, string> = {};
  private chunks: Buffer[] = [];
  private size = 0;

  constructor(
    private readonly t: UndiciTransport,
    private readonly resolve: (r: TransportResponse) => void,
    private readonly reject: (e: GatewayError) => void,
    remaining: number,
  ) {
    this.timer = setTimeout(() => this.fail(t.timeout()), remaining);
  }

  /** Rejects now and aborts the call: at once if it is under way, else as soon as undici starts it. */
  private fail(err: GatewayError): void {
    this.failure ??= err;
    this.controller?.abort(err);
    this.settle(undefined, err);
  }

  private settle(res: TransportResponse | undefined, err?: GatewayError): void {
    if (this.settled) return;
    this.settled = true;
    clearTimeout(this.timer);
    this.chunks = [];
    if (err) this.reject(err);
    else this.resolve(res!);
  }

  onRequestStart(controller: Dispatcher.DispatchController): void {
    if (this.failure) return controller.abort(this.failure);
    this.controller = controller;
  }

  onResponseStart(
    controller: Dispatcher.DispatchController,
    statusCode: number,
    headers: IncomingHttpHeaders,
  ): void {
    if (statusCode < 200) return; // 1xx: the answer follows
    if (Number(headers['content-length']) > this.t.maxResponseBytes) return this.fail(this.t.tooLarge());
    this.status = statusCode;
    for (const name of PASS_HEADERS) {
      const v = headers[name];
      if (v !== undefined) this.headers[name] = Array.isArray(v) ? v.join(', ') : v;
    }
    for (const name of ERROR_HEADERS) {
      const v = headers[name];
      if (v !== undefined) this.upstreamHeaders[name] = Array.isArray(v) ? v[0] : v;
    }
  }

  onResponseData(_controller: Dispatcher.DispatchController, chunk: Buffer): void {
    if (this.settled) return;
    this.size += chunk.length;
    if (this.size > this.t.maxResponseBytes) return this.fail(this.t.tooLarge());
    this.chunks.push(chunk);
  }

  onResponseEnd(): void {
    const { chunks, size } = this;
    this.settle({
      status: this.status,
      headers: this.headers,
      body: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size),
      upstreamHeaders: this.upstreamHeaders,
      upstreamMs: performance.now() - this.started,
    });
  }

  onResponseError(_controller: Dispatcher.DispatchController | undefined, err: Error): void {
    this.settle(undefined, this.failure ?? this.t.classify(err));
  }
}

/**
 * Resolves once a body has its first chunk buffered (or has ended), without consuming it: the chunk stays
 * in the stream for whoever reads it next. Rejects when the body fails first (e.g. our deadline).
 */
function firstChunk(body: Readable): Promise<void> {
  if (body.readableLength > 0 || body.readableEnded) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const settle = (err?: Error): void => {
      body.off('readable', onReadable);
      body.off('error', settle);
      body.off('close', onClose);
      if (err) reject(err);
      else resolve();
    };
    const onReadable = (): void => settle();
    const onClose = (): void => settle(body.errored ?? new Error('upstream body closed early'));
    body.on('readable', onReadable);
    body.on('error', settle);
    body.on('close', onClose);
  });
}

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}
