import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/** What the scripted fake received, before any script ran. */
export interface ScriptedRequest {
  method: string;
  /** Raw request target as received. */
  url: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: Buffer;
  at: number;
}

export interface ScriptContext {
  req: IncomingMessage;
  res: ServerResponse;
  recorded: ScriptedRequest;
  /** Resolves after `ms`, or at once when the fake closes (so no timer outlives a test). */
  sleep(ms: number): Promise<void>;
  /** The response was finished or its socket closed (the client gave up). */
  readonly gone: boolean;
  /** Resolves once the client has given up on this answer (or the fake closes): a vendor slower than any deadline. */
  untilGone(): Promise<void>;
}

export type Script = (ctx: ScriptContext) => void | Promise<void>;

/**
 * A vendor that misbehaves exactly as scripted, on raw node:http: it records every request, counts its
 * sockets (open, and those with an answer still in progress), and lets the test swap the script at any time.
 * Used by the hardening suites where the sandbox fakes' behaviours are too tidy (half bodies, trickles,
 * resets after the headers, hostile echoes), and with `answerOk` wherever a test compares what reached the
 * vendor, whatever the interface.
 */
export class ScriptedUpstream {
  readonly requests: ScriptedRequest[] = [];
  /** Successful `…/Auth/login/` calls (EMIS login step), counted by `emisLogin`. */
  logins = 0;
  script: Script;
  private server?: Server;
  private readonly sockets = new Set<Socket>();
  private busy = 0;
  private closed = false;
  private readonly wakers = new Set<() => void>();

  constructor(script: Script) {
    this.script = script;
  }

  get origin(): string {
    const a = this.server?.address() as AddressInfo | null | undefined;
    if (!a) throw new Error('scripted upstream not started');
    return `http://127.0.0.1:${a.port}`;
  }

  /** The origin, under the name withGateway's fakes give it. */
  get url(): string {
    return this.origin;
  }

  get port(): number {
    return (this.server!.address() as AddressInfo).port;
  }

  /** Open TCP connections from clients (the gateway's pools). */
  get openSockets(): number {
    return this.sockets.size;
  }

  /** Requests whose answer is neither finished nor abandoned by the client. */
  get inProgress(): number {
    return this.busy;
  }

  calls(pathPart?: string): number {
    return pathPart === undefined
      ? this.requests.length
      : this.requests.filter((r) => r.path.includes(pathPart)).length;
  }

  /** Forgets what was received (withGateway calls it before each test). */
  reset(): void {
    this.requests.length = 0;
    this.logins = 0;
  }

  async start(): Promise<this> {
    const server = createServer({ maxHeaderSize: 256 * 1024 }, (req, res) => void this.onRequest(req, res));
    server.keepAliveTimeout = 60_000;
    server.on('connection', (s: Socket) => {
      this.sockets.add(s);
      s.on('close', () => this.sockets.delete(s));
      s.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.server = server;
    return this;
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const wake of this.wakers) wake();
    const server = this.server;
    if (!server) return;
    const done = new Promise<void>((r) => server.close(() => r()));
    for (const s of this.sockets) s.destroy();
    await done;
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    this.busy++;
    let gone = false;
    const closed = new Promise<void>((resolve) =>
      res.once('close', () => {
        gone = true;
        this.busy--;
        resolve();
      }),
    );
    const chunks: Buffer[] = [];
    try {
      for await (const c of req) chunks.push(c as Buffer);
    } catch {
      return;
    }
    const url = req.url ?? '/';
    const q = url.indexOf('?');
    const recorded: ScriptedRequest = {
      method: req.method ?? 'GET',
      url,
      path: q === -1 ? url : url.slice(0, q),
      query: new URLSearchParams(q === -1 ? '' : url.slice(q + 1)),
      headers: req.headers,
      body: Buffer.concat(chunks),
      at: Date.now(),
    };
    this.requests.push(recorded);
    const ctx: ScriptContext = {
      req,
      res,
      recorded,
      sleep: (ms) =>
        new Promise<void>((resolve) => {
          if (this.closed) return resolve();
          const wake = () => {
            clearTimeout(t);
            this.wakers.delete(wake);
            resolve();
          };
          const t = setTimeout(wake, ms);
          this.wakers.add(wake);
        }),
      get gone() {
        return gone;
      },
      untilGone: () =>
        new Promise<void>((resolve) => {
          if (this.closed || gone) return resolve();
          const wake = () => {
            this.wakers.delete(wake);
            resolve();
          };
          this.wakers.add(wake);
          void closed.then(wake);
        }),
    };
    try {
      await this.script(ctx);
    } catch {
      res.destroy();
    }
  }
}

// ---------------------------------------------------------------------------------------------------
// Script building blocks

export function sendJson(res: ServerResponse, status: number, body: unknown, headers = {}): void {
  sendText(res, status, JSON.stringify(body), {
    'content-type': 'application/json; charset=utf-8',
    ...headers,
  });
}

export function sendText(
  res: ServerResponse,
  status: number,
  text: string | Buffer,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent || res.destroyed) return;
  const buf = Buffer.isBuffer(text) ? text : Buffer.from(text);
  res.writeHead(status, { 'content-length': String(buf.length), ...headers });
  res.end(buf);
}

/**
 * A small 200 to every call, JSON, or XML when the request asks for it by `Accept` or an EMIS `/xml/` path:
 * a vendor that knows no route.
 */
export const answerOk: Script = ({ req, res }) => {
  const xml = String(req.headers.accept ?? '').includes('xml') || (req.url ?? '').includes('/xml/');
  if (xml)
    sendText(res, 200, '<?xml version="1.0"?><response><data/></response>', {
      'content-type': 'application/xml',
    });
  else sendText(res, 200, '{"data":[]}', { 'content-type': 'application/json' });
};

/** The EMIS login step: `…/Auth/login/` answers a session id (counted); anything else goes to `then`. */
export function emisLogin(fake: ScriptedUpstream, sessionId: () => string, then: Script): Script {
  return (ctx) => {
    if (ctx.recorded.path.endsWith('/Auth/login/')) {
      fake.logins++;
      sendJson(ctx.res, 200, { data: { sessionId: sessionId() } });
      return;
    }
    return then(ctx);
  };
}

/** Writes `body` in pieces of `bytes`, one every `intervalMs`, after the headers (declared length). */
export async function trickle(
  ctx: ScriptContext,
  body: string,
  bytes: number,
  intervalMs: number,
  contentType = 'application/json',
): Promise<void> {
  const buf = Buffer.from(body);
  ctx.res.writeHead(200, { 'content-type': contentType, 'content-length': String(buf.length) });
  ctx.res.flushHeaders();
  for (let i = 0; i < buf.length && !ctx.gone; i += bytes) {
    ctx.res.write(buf.subarray(i, i + bytes));
    await ctx.sleep(intervalMs);
  }
  if (!ctx.gone) ctx.res.end();
}

/** Sends the headers and part of a declared body, then resets the connection (TCP RST). */
export async function resetMidBody(
  ctx: ScriptContext,
  body: Buffer,
  sendBytes: number,
  headers: Record<string, string>,
): Promise<void> {
  ctx.res.writeHead(200, { ...headers, 'content-length': String(body.length) });
  ctx.res.write(body.subarray(0, sendBytes));
  // Let the part reach the gateway before the reset.
  await ctx.sleep(50);
  ctx.req.socket.resetAndDestroy();
}

/**
 * Streams `totalBytes` of a valid-looking JSON array as fast as the client reads, with or without a
 * declared length; stops when the client goes away.
 */
export async function oversize(
  ctx: ScriptContext,
  totalBytes: number,
  declareLength: boolean,
): Promise<void> {
  const item = `{"id":1,"pad":"${'x'.repeat(1000)}"},`;
  const head = '{"data":[';
  const tail = '{"id":0}]}';
  const count = Math.ceil((totalBytes - head.length - tail.length) / item.length);
  const length = head.length + count * item.length + tail.length;
  ctx.res.writeHead(200, {
    'content-type': 'application/json',
    ...(declareLength ? { 'content-length': String(length) } : {}),
  });
  ctx.res.write(head);
  const chunk = item.repeat(64);
  let sent = 0;
  while (sent < count && !ctx.gone) {
    const n = Math.min(64, count - sent);
    const ok = ctx.res.write(n === 64 ? chunk : item.repeat(n));
    sent += n;
    if (!ok)
      await new Promise<void>((r) => {
        const done = () => {
          ctx.res.off('drain', done);
          ctx.res.off('close', done);
          r();
        };
        ctx.res.once('drain', done);
        ctx.res.once('close', done);
      });
  }
  if (!ctx.gone) ctx.res.end(tail);
}
