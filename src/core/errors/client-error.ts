import { randomUUID } from 'node:crypto';
import { STATUS_CODES, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { Socket } from 'node:net';
import type { ErrorCode } from './error-codes.js';
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
      return new GatewayError(overflowCode(err));
    case 'HPE_CHUNK_EXTENSIONS_OVERFLOW':
      return new GatewayError('PAYLOAD_TOO_LARGE', {
        message: 'A chunk extension of the body is too large.',
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

/** A complete HTTP/1.1 answer carrying the one envelope, for a socket that has no request object. */
export function rawEnvelopeResponse(err: GatewayError, requestId: string): string {
  const body = JSON.stringify(buildEnvelope(err, requestId));
  return (
    `HTTP/1.1 ${err.status} ${STATUS_CODES[err.status] ?? 'Error'}\r\n` +
    'content-type: application/json; charset=utf-8\r\n' +
    `content-length: ${Buffer.byteLength(body)}\r\n` +
    `x-request-id: ${requestId}\r\n` +
    'connection: close\r\n\r\n' +
    body
  );
}

/** Writes `err` as the whole answer on a raw socket, then closes gracefully (see handleClientError). */
function answerRaw(socket: Socket, err: GatewayError): void {
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
        answerRaw(socket, err);
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
  socket.end(rawEnvelopeResponse(err, randomUUID()));
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
  answerRaw(socket, clientParseError(err));
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
