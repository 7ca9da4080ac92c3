import fastifyCompress, { type FastifyCompressOptions } from '@fastify/compress';
import type { FastifyInstance, FastifyReply } from 'fastify';

/** Answers smaller than this go as they are: below ~1 KiB the encoding costs more than it saves. */
export const COMPRESS_THRESHOLD_BYTES = 1024;

/** JSON and XML, `+json`/`+xml` included: what the gateway answers in buffered form. */
const COMPRESSIBLE = /^[^;]*(?:\/|\+)(?:json|xml)\s*(?:;|$)/i;

/**
 * @fastify/compress as the gateway uses it: not global (a file route's stream and a signed download pass
 * through as the vendor sent them), never decompressing request bodies (they are forwarded as sent),
 * brotli before gzip by the client's Accept-Encoding.
 */
const OPTIONS = {
  global: false,
  globalDecompression: false,
  threshold: COMPRESS_THRESHOLD_BYTES,
  encodings: ['br', 'gzip'],
  customTypes: COMPRESSIBLE,
} as const satisfies FastifyCompressOptions;

/** Registers the plugin; before any route is added (createAdapter), as it decorates each route. */
export function installCompression(fastify: FastifyInstance): void {
  void fastify.register(fastifyCompress, OPTIONS);
}

/** Adds `Accept-Encoding` to `Vary` (once), keeping what is there (CORS's `Origin`). */
function varyOnEncoding(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  const current = Array.isArray(vary) ? vary.join(', ') : vary === undefined ? '' : String(vary);
  if (/(?:^|,)\s*accept-encoding\s*(?:,|$)/i.test(current)) return;
  reply.header('vary', current ? `${current}, accept-encoding` : 'accept-encoding');
}

/**
 * Sends a buffered answer, compressed when it is JSON or XML, over the threshold and the client accepts br
 * or gzip. Such an answer always varies on Accept-Encoding, compressed this time or not, so no shared cache
 * hands an encoding to a client that did not ask for it. Other types are sent as they are.
 */
export function sendCompressible(reply: FastifyReply, body: Buffer | string): FastifyReply {
  const type = reply.getHeader('content-type');
  if (typeof type !== 'string' || !COMPRESSIBLE.test(type)) return reply.send(body);
  varyOnEncoding(reply);
  reply.compress(body);
  return reply;
}
