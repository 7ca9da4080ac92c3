import { negotiate } from '@fastify/accept-negotiator';
import fastifyCompress, { type FastifyCompressOptions } from '@fastify/compress';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { LRUCache } from 'lru-cache';

/** Answers smaller than this go as they are: below ~1 KiB the encoding costs more than it saves. */
export const COMPRESS_THRESHOLD_BYTES = 1024;

/** JSON and XML, `+json`/`+xml` included: what the gateway answers in buffered form. */
const COMPRESSIBLE = /^[^;]*(?:\/|\+)(?:json|xml)\s*(?:;|$)/i;

/** Larger answers are compressed as a stream, on every send (their compressed forms are not kept). */
export const COMPRESS_SYNC_MAX_BYTES = 64 * 1024;

const ENCODINGS: Array<'br' | 'gzip'> = ['br', 'gzip'];

/**
 * @fastify/compress as the gateway uses it: not global (a file route's stream and a signed download pass
 * through as the vendor sent them), never decompressing request bodies (they are forwarded as sent),
 * brotli before gzip by the client's Accept-Encoding.
 */
const OPTIONS = {
  global: false,
  globalDecompression: false,
  threshold: COMPRESS_THRESHOLD_BYTES,
  // Up to this size an answer is compressed in one synchronous call (its form can then be kept); larger
  // ones stream through zlib. The plugin's default shrinks with the cores (8 KiB on two); 64 KiB keeps the
  // forms of typical JSON answers at a cost of about a millisecond, once per entry and encoding.
  syncThreshold: COMPRESS_SYNC_MAX_BYTES,
  encodings: ENCODINGS,
  customTypes: COMPRESSIBLE,
} as const satisfies FastifyCompressOptions;

/** Compressed forms kept for answers with a strong validator of their bytes, by encoding and ETag. */
const COMPRESSED_FORMS_MAX_BYTES = 16 * 1024 * 1024;
const compressedForms = new LRUCache<string, Buffer>({
  maxSize: COMPRESSED_FORMS_MAX_BYTES,
  sizeCalculation: (b, k) => b.length + k.length,
});
/** How often a compressed form was made and kept, and sent again as it was (this process). */
export const compressedFormCounts = { kept: 0, reused: 0 };
/** The key a reply's compressed form is kept under, while the plugin makes it (read by the onSend hook). */
const formKeys = new WeakMap<FastifyReply, string>();

/**
 * Registers the plugin; before any route is added (createAdapter), as it decorates each route. Its output
 * for an answer with a validator is kept (onSend), so the next cache hit sends those bytes as they are.
 */
export function installCompression(fastify: FastifyInstance): void {
  void fastify.register(fastifyCompress, OPTIONS);
  fastify.addHook('onSend', (_req, reply, payload, done) => {
    const key = formKeys.get(reply);
    const encoding = reply.getHeader('content-encoding');
    if (key !== undefined && Buffer.isBuffer(payload) && typeof encoding === 'string') {
      compressedForms.set(`${encoding} ${key}`, payload);
      compressedFormCounts.kept++;
    }
    done(null, payload);
  });
}

/** Adds `Accept-Encoding` to `Vary` (once), keeping what is there (CORS's `Origin`). */
function varyOnEncoding(reply: FastifyReply): void {
  const vary = reply.getHeader('vary');
  const current = Array.isArray(vary) ? vary.join(', ') : vary === undefined ? '' : String(vary);
  if (/(?:^|,)\s*accept-encoding\s*(?:,|$)/i.test(current)) return;
  reply.header('vary', current ? `${current}, accept-encoding` : 'accept-encoding');
}

/** The encoding @fastify/compress picks for this request (its own negotiation: `*` and x-gzip are gzip). */
function encodingFor(reply: FastifyReply): string | undefined {
  const header = reply.request.headers['accept-encoding'];
  if (typeof header !== 'string') return undefined;
  return negotiate(header.toLowerCase().replace(/\*|x-gzip/g, 'gzip'), ENCODINGS) ?? undefined;
}

/**
 * Sends a buffered answer, compressed when it is JSON or XML, over the threshold and the client accepts br
 * or gzip. Such an answer always varies on Accept-Encoding, compressed this time or not, so no shared cache
 * hands an encoding to a client that did not ask for it. Other types are sent as they are.
 *
 * `validator`: a strong ETag of exactly these bytes (a cached route's answer). Its compressed forms are made
 * once and kept: a cache hit is not compressed again (docs/frontend.md, "Compression").
 */
export function sendCompressible(
  reply: FastifyReply,
  body: Buffer | string,
  validator?: string,
): FastifyReply {
  const type = reply.getHeader('content-type');
  if (typeof type !== 'string' || !COMPRESSIBLE.test(type)) return reply.send(body);
  varyOnEncoding(reply);
  if (validator !== undefined && Buffer.byteLength(body) >= COMPRESS_THRESHOLD_BYTES) {
    const encoding = encodingFor(reply);
    const kept = encoding === undefined ? undefined : compressedForms.get(`${encoding} ${validator}`);
    if (kept !== undefined) {
      compressedFormCounts.reused++;
      return reply.header('content-encoding', encoding).header('content-length', kept.length).send(kept);
    }
    formKeys.set(reply, validator);
  }
  reply.compress(body);
  return reply;
}
