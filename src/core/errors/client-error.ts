import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorCode } from './error-codes.js';
import { untracedContext } from '../tracing/trace-context.js';
import { buildEnvelope } from './error-envelope.js';
import { GatewayError } from './gateway-error.js';

/** What node's HTTP parser attaches to a `clientError`. */
export interface ClientParseError extends Error {
  code?: string;
  /** Offset in `rawPacket` where the parser stopped. */
  bytesParsed?: number;
  /** The chunk being parsed when it failed (a Buffer from node's parser). */
  rawPacket?: unknown;
}

/** How long a refused connection is still read (and discarded) after its answer, so the client can read it. */
const LINGER_MS = 2_000;

/**
 * Connections already answered (node reports what a refused client still sends again). Module level, as
 * the renderers and heads below: handleClientError is given in the adapter's options, before any app exists.
 */
const answered = new WeakSet<Socket>();

/**
 * Node's 64 KiB header limit covers the request line too, so one parser error stands for an oversize URL and
 * oversize headers alike. Where it stopped tells them apart: at the end of the request target (` HTTP/1.1`
 * follows), or inside one token with no space, colon or line break (a URL spanning chunks) → the URL.
 */
function overflowCode(err: ClientParseError): ErrorCode {
  const raw = err.rawPacket;
  const at = err.bytesParsed;
  if (!Buffer.isBuffer(raw) || at === undefined) return 'HEADERS_TOO_LARGE';
  if (raw.toString('latin1', at, at + 6) === ' HTTP/') return 'URI_TOO_LONG';
  const head = raw.toString('latin1', 0, Math.min(raw.length, 65_536));
  return /^[^\s:]+$/.test(head) ? 'URI_TOO_LONG' : 'HEADERS_TOO_LARGE';
}

/** The gateway error a request the HTTP parser refused stands for. */
export function clientParseError(err: ClientParseError): GatewayError {
  switch (err.code) {
    case 'HPE_HEADER_OVERFLOW':
      return overflowCode(err) === 'URI_TOO_LONG'
        ? new GatewayError('URI_TOO_LONG', {
            message: 'The request URL is too long: the request line and headers may take at most 64 KiB.',
          })
        : new GatewayError('HEADERS_TOO_LARGE', {
            message:
              'The request headers are too large: the request line and headers may take at most 64 KiB.',
          });
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new GatewayError('PAYLOAD_TOO_LARGE', {
        message: 'A chunk extension of the body is too large: chunk extensions may take at most 16 KiB.',
      });
    case 'ERR_HTTP_REQUEST_TIMEOUT':
      return new GatewayError('REQUEST_TIMEOUT');
    default:
      // Bad request line, invalid header, Content-Length beside Transfer-Encoding, a bad chunk size…
      return new GatewayError('VALIDATION_FAILED', {
        parameter: 'request',
        message: 'The request is not valid HTTP/1.1.',
      });
  }
}

/** An envelope written out: its body and content type. */
export interface RenderedEnvelope {
  readonly contentType: string;
  readonly body: string;
}

/**
 * Renders the envelope of a refusal for which only the start of the request is known (its target as far
 * as it was read, its `Accept` when that was read too): the vendor-shaped members of its prefix, XML when
 * the query or `Accept` asks for it.
 */
export type HeadRenderer = (
  err: GatewayError,
  requestId: string,
  traceId: string,
  target: string,
  accept?: string,
) => RenderedEnvelope;

/** Each server's renderer, set once by configureApp (renderParserRefusals). */
const renderers = new WeakMap<object, HeadRenderer>();
/** The request target a connection's first chunk started with, until a request on it is parsed. */
const heads = new WeakMap<
  Socket,
  { readonly target: string; readonly traceparent?: string; readonly accept?: string }
>();
const REQUEST_LINE = /^[A-Z]+ (\S+)/;
const HEAD_BYTES = 8192;

const TRACEPARENT = /\r\ntraceparent:[ \t]*([^\r\n]{1,128})\r\n/i;
const ACCEPT = /\r\naccept:[ \t]*([^\r\n]{1,1024})\r\n/i;

/** A header in a chunk of a request head, if the chunk holds it whole. */
function headerIn(raw: unknown, header: RegExp): string | undefined {
  if (!Buffer.isBuffer(raw)) return undefined;
  return header.exec(raw.toString('latin1', 0, Math.min(raw.length, 65_536)))?.[1];
}

/** The request target at the start of `raw`, when `raw` starts a request line. */
function targetOf(raw: unknown): string | undefined {
  if (!Buffer.isBuffer(raw)) return undefined;
  return REQUEST_LINE.exec(raw.toString('latin1', 0, Math.min(raw.length, HEAD_BYTES)))?.[1];
}

/**
 * Lets the parser's refusals of `server` (an oversize URL above all) carry what a routed refusal carries:
 * the parser hands over only the chunk it failed in, so the start of each connection's first request is
 * kept until that request is parsed. Later requests on a kept-alive connection are judged by their chunk.
 */
export function renderParserRefusals(server: Server, render: HeadRenderer): void {
  renderers.set(server, render);
  server.on('connection', (socket: Socket) => {
    socket.once('data', (chunk: Buffer) => {
      const target = targetOf(chunk);
      if (target !== undefined)
        heads.set(socket, {
          target,
          traceparent: headerIn(chunk, TRACEPARENT),
          accept: headerIn(chunk, ACCEPT),
        });
    });
  });
  server.on('request', (req: IncomingMessage) => heads.delete(req.socket));
}

/** A complete HTTP/1.1 answer carrying the one envelope, for a socket that has no request object. */
export function rawEnvelopeResponse(
  err: GatewayError,
  requestId: string,
  rendered?: RenderedEnvelope,
  traceId?: string,
): string {
  const body = rendered?.body ?? JSON.stringify(buildEnvelope(err, requestId, traceId));
  return (
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? 'Error'}\r\n` +
    `content-type: ${rendered?.contentType ?? 'application/json; charset=utf-8'}\r\n` +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    `x-request-id: ${requestId}\r\n` +
    'connection: close\r\n\r\n' +
    body
  );
}

/** Writes `err` as the whole answer on a raw socket, then closes gracefully (see handleClientError). */
function answerRaw(
  socket: Socket,
  err: GatewayError,
  render?: (id: string, traceId: string) => RenderedEnvelope,
  traceId?: string,
): void {
  if (socket.destroyed) return;
  // node's own (private) link to the answer in progress on this socket, as its default handler reads it.
  const pending = (socket as Socket & { _httpMessage?: ServerResponse })._httpMessage;
  if (pending && !pending.writableFinished) {
    if (pending.req.complete) {
      // The answer to an earlier, complete pipelined request is on its way: ours follows, never cuts in.
      const guard = setTimeout(() => socket.destroy(), LINGER_MS);
      guard.unref();
      pending.once('finish', () => {
        clearTimeout(guard);
        answerRaw(socket, err, render, traceId);
      });
      pending.once('close', () => clearTimeout(guard));
      return;
    }
    // It is this request's own body that broke: its answer will never come, ours replaces it if we can.
    if (pending.headersSent) {
      socket.destroy();
      return;
    }
  }
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  const requestId = randomUUID();
  const trace = traceId ?? untracedContext(undefined, undefined).traceId;
  socket.end(rawEnvelopeResponse(err, requestId, render?.(requestId, trace), trace));
  const linger = setTimeout(() => socket.destroy(), LINGER_MS);
  linger.unref();
  socket.once('close', () => clearTimeout(linger));
}

/**
 * The server's `clientError` handler (Fastify's `clientErrorHandler`): a request node's parser refused (bad
 * request line or header, oversize URL or headers, Content-Length beside Transfer-Encoding, a bad chunk, a
 * request timeout) is answered in the one envelope with an `x-request-id`, like any other error. The
 * connection is then closed gracefully: our side is shut, and what the client still sends is read and dropped
 * for a short while (the parser reports it again; repeats are ignored), so a client still writing sees the
 * answer instead of a reset.
 */
export function handleClientError(err: ClientParseError, socket: Socket): void {
  if (answered.has(socket)) return;
  answered.add(socket);
  if (err.code === 'ECONNRESET' || socket.destroyed) return;
  const refusal = clientParseError(err);
  const render = renderers.get((socket as Socket & { server?: object }).server ?? socket);
  const head = heads.get(socket);
  const target = targetOf(err.rawPacket) ?? head?.target;
  // The request's own trace when its `traceparent` was read (in the chunk that failed or the connection's
  // first), else a new one, as for any request that brings none.
  const traceparent = headerIn(err.rawPacket, TRACEPARENT) ?? head?.traceparent;
  // Likewise its `Accept`: a URL just over the limit is refused at its end, with the headers in the chunk;
  // one far over it is refused before they arrive, and then only its query can ask for XML.
  const accept = headerIn(err.rawPacket, ACCEPT) ?? head?.accept;
  answerRaw(
    socket,
    refusal,
    render && target !== undefined
      ? (id, traceId) => render(refusal, id, traceId, target, accept)
      : undefined,
    untracedContext(traceparent, undefined).traceId,
  );
}

/**
 * What node's HTTP server would answer on its own, outside the envelope: an `Expect` other than
 * `100-continue` (node: a bare 417; RFC 9110 lets a server ignore an expectation it does not know, so the
 * request is served as usual) and `CONNECT` (node: the socket is dropped; here a 405 in the envelope).
 */
export function answerWhatNodeRefuses(server: Server): void {
  server.on('checkExpectation', (req: IncomingMessage, res: ServerResponse) =>
    server.emit('request', req, res),
  );
  server.on('connect', (_req: IncomingMessage, socket: Socket) => {
    socket.on('error', () => undefined);
    answerRaw(
      socket,
      new GatewayError('METHOD_NOT_ALLOWED', { message: 'CONNECT is not a method of the gateway.' }),
    );
  });
}
