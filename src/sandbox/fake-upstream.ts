// Generic fake upstream: a real node:http server on loopback that records every request, applies
// scriptable misbehaviour (fake-behaviour.ts) and then lets a vendor subclass answer. Tests in-process
// use the class; tests and benchmarks in other processes use the HTTP control API (fake-control.ts).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { type FakeBehaviour, rateLimitHeaders } from './fake-behaviour.js';
import { DEFAULT_FILE_BYTES, generatedFileStream, oversizeJson } from './fake-bodies.js';
import { genericControl } from './fake-control.js';
import {
  type FakeReply,
  lowerKeys,
  plainJson,
  sniffContentType,
  withEcho,
  writeReply,
} from './fake-reply.js';
import type {
  AuthResult,
  FakeHandler,
  FakeRequest,
  FakeUpstreamOptions,
  RecordedRequest,
} from './fake-upstream.types.js';

export type { FakeBehaviour, RateLimitHeader } from './fake-behaviour.js';
export type { FakeReply } from './fake-reply.js';
export type * from './fake-upstream.types.js';

function readBody(req: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => resolve(Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

export class FakeUpstream {
  readonly kind: string;
  readonly basePath: string;
  /** Recorded in arrival order, before any behaviour applies; control calls are not recorded. */
  readonly requests: RecordedRequest[] = [];
  private readonly recordLimit: number;
  private readonly callsByPath = new Map<string, number>();
  private totalCalls = 0;
  /** Clock for rate-limit windows and sessions (replace it in tests to move time). */
  now: () => number;

  private readonly handler?: FakeHandler;
  private readonly maxHeaderSize: number;
  private server?: Server;
  private host = '127.0.0.1';
  private port = 0;
  private readonly sockets = new Set<Socket>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private current: FakeBehaviour = { latencyMs: 0 };
  private failRemaining?: number;
  private resetRemaining?: number;
  private rateState = { served: 0, blockedUntil: 0 };

  constructor(opts: FakeUpstreamOptions) {
    this.kind = opts.kind;
    this.basePath = (opts.basePath ?? '').replace(/\/+$/, '');
    this.handler = opts.handler;
    this.now = opts.now ?? Date.now;
    this.maxHeaderSize = opts.maxHeaderSize ?? 65_536;
    this.recordLimit = opts.recordLimit ?? 10_000;
  }

  /** `http://host:port` of the running server. */
  get origin(): string {
    if (!this.server && this.port === 0) throw new Error(`fake ${this.kind} is not started`);
    const host = this.host.includes(':') ? `[${this.host}]` : this.host;
    return `http://${host}:${this.port}`;
  }

  /** Base URL including the base path, e.g. `http://127.0.0.1:PORT/v2`. */
  get url(): string {
    return `${this.origin}${this.basePath}`;
  }

  get controlUrl(): string {
    return `${this.origin}/__fake`;
  }

  get listening(): boolean {
    return this.server?.listening ?? false;
  }

  /** Open TCP connections, hung ones included (0 after close()). */
  get connectionCount(): number {
    return this.sockets.size;
  }

  /** Bytes written so far on the connections still open (tests watch backpressure stop a file download). */
  get bytesWrittenOnOpenConnections(): number {
    let n = 0;
    for (const socket of this.sockets) n += socket.bytesWritten;
    return n;
  }

  /** A copy of the current behaviour. */
  get behaviour(): FakeBehaviour {
    return structuredClone(this.current);
  }

  async start(port = 0, host = '127.0.0.1'): Promise<string> {
    if (this.server) throw new Error(`fake ${this.kind} is already started`);
    const server = createServer({ maxHeaderSize: this.maxHeaderSize }, (req, res) => {
      this.onRequest(req, res).catch(() => res.destroy());
    });
    server.on('connection', (socket: Socket) => {
      this.sockets.add(socket);
      socket.on('close', () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.server = server;
    this.host = host;
    this.port = (server.address() as AddressInfo).port;
    return this.url;
  }

  /** Closes the listener and every socket (hung ones too) and cancels pending latency timers. */
  async close(): Promise<void> {
    for (const t of this.timers) clearTimeout(t);
    this.timers.clear();
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    const closed = new Promise<void>((resolve) => server.close(() => resolve()));
    server.closeAllConnections();
    for (const socket of this.sockets) socket.destroy();
    this.sockets.clear();
    await closed;
  }

  /** Stops listening (new connections are refused) and drops open ones; restart() reuses the port. */
  async stop(): Promise<void> {
    await this.close();
  }

  async restart(): Promise<void> {
    await this.close();
    await this.start(this.port, this.host);
  }

  /** Merges a behaviour patch; a key set to undefined returns to its default. */
  behave(patch: Partial<FakeBehaviour>): void {
    const next: Record<string, unknown> = { ...this.current };
    for (const [key, value] of Object.entries(patch)) {
      if (value === undefined || value === null) delete next[key];
      else next[key] = value;
    }
    next.latencyMs ??= 0;
    this.current = next as unknown as FakeBehaviour;
    if ('failWith' in patch) this.failRemaining = this.current.failWith?.times;
    if ('resetConnections' in patch) this.resetRemaining = this.current.resetConnections?.times;
    if ('rateLimit' in patch) this.rateState = { served: 0, blockedUntil: 0 };
  }

  /** Clears recorded requests, behaviour and per-test vendor state (generated data stays). */
  reset(): void {
    this.requests.length = 0;
    this.callsByPath.clear();
    this.totalCalls = 0;
    this.current = { latencyMs: 0 };
    this.failRemaining = undefined;
    this.resetRemaining = undefined;
    this.rateState = { served: 0, blockedUntil: 0 };
    this.resetState();
  }

  /** Requests received since start or reset(), optionally only those whose raw path starts with basePath + prefix. */
  calls(pathPrefix?: string): number {
    if (pathPrefix === undefined) return this.totalCalls;
    const prefix = this.basePath + pathPrefix;
    let n = 0;
    for (const [path, count] of this.callsByPath) if (path.startsWith(prefix)) n += count;
    return n;
  }

  // ------------------------------------------------------------------------------------------
  // Vendor hooks

  /** Checks the credential; the default accepts everything. */
  protected authenticate(_req: FakeRequest): AuthResult {
    return { credential: '' };
  }

  protected handle(req: FakeRequest, credential: string): FakeReply | Promise<FakeReply> {
    return this.handler ? this.handler(req, credential) : this.errorReply(404, 'Not found');
  }

  /** The vendor-shaped error answer for a status (used by failWith, rate limits and crashes). */
  protected errorReply(status: number, message?: string): FakeReply {
    return { status, json: { error: { status, message: message ?? `HTTP ${status}` } } };
  }

  /** Vendor extras of the control API (`/__fake/<name>`); undefined = unknown endpoint. */
  protected controlExtra(
    _method: string,
    _name: string,
    _body: Buffer,
  ): FakeReply | Promise<FakeReply> | undefined {
    return undefined;
  }

  /** Vendor per-test state to clear on reset(). */
  protected resetState(): void {}

  /** Behaviour-aware file answer: `fileBytes` generated bytes, streamed with a Content-Length. */
  protected fileReply(contentType: string, filename: string, header = ''): FakeReply {
    const bytes = this.current.fileBytes ?? DEFAULT_FILE_BYTES;
    return {
      status: 200,
      headers: {
        'content-type': contentType,
        'content-disposition': `attachment; filename="${filename}"`,
      },
      stream: generatedFileStream(bytes, header),
      length: bytes,
    };
  }

  // ------------------------------------------------------------------------------------------
  // Request pipeline

  private controlName(path: string): string | undefined {
    for (const prefix of ['/__fake/', `${this.basePath}/__fake/`]) {
      if (path.startsWith(prefix)) return path.slice(prefix.length).replace(/\/+$/, '');
    }
    return undefined;
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const body = await readBody(req);
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const path = q < 0 ? url : url.slice(0, q);
    const query = new URLSearchParams(q < 0 ? '' : url.slice(q + 1));
    const method = (req.method ?? 'GET').toUpperCase();

    const control = this.controlName(path);
    if (control !== undefined) {
      this.send(res, await this.control(method, control, query, body));
      return;
    }

    const recorded: RecordedRequest = {
      method,
      url,
      path,
      query: [...query],
      headers: req.headers,
      body,
      at: this.now(),
    };
    this.requests.push(recorded);
    // Trim in batches: dropping one entry per request would copy the whole array every time.
    if (this.requests.length >= 2 * this.recordLimit)
      this.requests.splice(0, this.requests.length - this.recordLimit);
    this.totalCalls++;
    this.callsByPath.set(path, (this.callsByPath.get(path) ?? 0) + 1);

    const b = this.current;
    if (b.hang) return; // the socket stays open until the client gives up or close() runs
    if (b.latencyMs > 0) {
      await this.sleep(b.latencyMs);
      if (res.destroyed || !this.server) return;
    }
    if (this.current.resetConnections && this.take('reset')) {
      req.socket.resetAndDestroy();
      return;
    }
    const fail = this.current.failWith;
    if (fail && this.take('fail')) {
      this.send(res, this.failReply(fail));
      return;
    }
    const limited = this.rateLimited();
    if (limited) {
      this.send(res, limited);
      return;
    }

    const fakeReq: FakeRequest = {
      // HEAD is served as GET, as the vendors' web stacks (PHP, Spring) do; Node sends no body for a HEAD.
      method: method === 'HEAD' ? 'GET' : method,
      path: path.startsWith(this.basePath) ? path.slice(this.basePath.length) : path,
      query,
      headers: req.headers,
      body,
      recorded,
    };
    let reply: FakeReply;
    try {
      if (this.basePath && !path.startsWith(`${this.basePath}/`) && path !== this.basePath) {
        reply = this.errorReply(404, 'Not found');
      } else {
        const auth = this.authenticate(fakeReq);
        if ('reply' in auth) reply = auth.reply;
        else if (this.current.oversizeBytes !== undefined) {
          const big = oversizeJson(this.current.oversizeBytes);
          reply = { status: 200, headers: { 'content-type': 'application/json' }, ...big };
        } else if (this.current.malformedJson) {
          reply = {
            status: 200,
            headers: { 'content-type': 'application/json' },
            text: '{"data":[{"id":1,"name":"trunc',
          };
        } else {
          reply = await this.handle(fakeReq, auth.credential);
          if (this.current.echoCredential) reply = withEcho(reply, auth.credential);
        }
      }
    } catch (err) {
      reply = this.errorReply(500, err instanceof Error ? err.message : 'Internal error');
    }
    this.send(res, reply);
  }

  private take(which: 'fail' | 'reset'): boolean {
    const remaining = which === 'fail' ? this.failRemaining : this.resetRemaining;
    if (remaining === undefined) return true;
    if (remaining <= 0) return false;
    if (which === 'fail') {
      this.failRemaining = remaining - 1;
      if (remaining === 1) this.behave({ failWith: undefined });
    } else {
      this.resetRemaining = remaining - 1;
      if (remaining === 1) this.behave({ resetConnections: undefined });
    }
    return true;
  }

  private failReply(fail: NonNullable<FakeBehaviour['failWith']>): FakeReply {
    const headers = lowerKeys(fail.headers);
    if (fail.body === undefined) {
      const base = this.errorReply(fail.status);
      return { ...base, status: fail.status, headers: { ...base.headers, ...headers } };
    }
    if (typeof fail.body === 'string') {
      headers['content-type'] ??= sniffContentType(fail.body);
      return { status: fail.status, headers, text: fail.body };
    }
    return { status: fail.status, headers, json: fail.body };
  }

  private rateLimited(): FakeReply | undefined {
    const rl = this.current.rateLimit;
    if (!rl) return undefined;
    const now = this.now();
    const state = this.rateState;
    if (state.blockedUntil !== 0 && now >= state.blockedUntil)
      this.rateState = { served: 0, blockedUntil: 0 };
    if (this.rateState.blockedUntil === 0 && this.rateState.served < rl.afterCalls) {
      this.rateState.served++;
      return undefined;
    }
    if (this.rateState.blockedUntil === 0) this.rateState.blockedUntil = now + rl.retryAfterSeconds * 1000;
    const until = this.rateState.blockedUntil;
    const headers = rateLimitHeaders(rl, until, now);
    const base = this.errorReply(429);
    return { ...base, status: 429, headers: { ...base.headers, ...headers } };
  }

  private async control(
    method: string,
    name: string,
    query: URLSearchParams,
    body: Buffer,
  ): Promise<FakeReply> {
    const generic = genericControl(this, method, name, query, body);
    if (generic) return generic;
    const extra = await this.controlExtra(method, name, body);
    return extra ?? { status: 404, json: { error: `unknown control endpoint ${method} /__fake/${name}` } };
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        resolve();
      }, ms);
      this.timers.add(timer);
    });
  }

  /** How this vendor's stack writes JSON (PHP stacks escape differently from JavaScript ones). */
  protected encodeJson(value: unknown): string {
    return plainJson(value);
  }

  private send(res: ServerResponse, reply: FakeReply): void {
    writeReply(res, reply, (v) => this.encodeJson(v));
  }
}
