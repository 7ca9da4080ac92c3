import { brotliCompressSync, constants, gzipSync, type BrotliOptions, type ZlibOptions } from 'node:zlib';
import { negotiate } from '@fastify/accept-negotiator';
import fastifyCompress, { type FastifyCompressOptions } from '@fastify/compress';
import { Injectable } from '@nestjs/common';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { LRUCache } from 'lru-cache';

/** Answers smaller than this go as they are: below ~1 KiB the encoding costs more than it saves. */
export const COMPRESS_THRESHOLD_BYTES = 1024;

/** JSON and XML, `+json`/`+xml` included: what the gateway answers in buffered form. */
const COMPRESSIBLE = /^[^;]*(?:\/|\+)(?:json|xml)\s*(?:;|$)/i;

/** Larger answers are compressed as a stream, on every send (their compressed forms are not kept). */
export const COMPRESS_SYNC_MAX_BYTES = 64 * 1024;

type Encoding = 'br' | 'gzip';
const ENCODINGS: Encoding[] = ['br', 'gzip'];

/** Brotli quality 4 (the plugin's own default, stated here as the kept forms are made with it too). */
const BROTLI_OPTIONS: BrotliOptions = { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } };
const ZLIB_OPTIONS: ZlibOptions = {};

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
  brotliOptions: BROTLI_OPTIONS,
  zlibOptions: ZLIB_OPTIONS,
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

/** The encoding @fastify/compress picks for this request (its own negotiation: `*` and x-gzip are gzip). */
function encodingFor(reply: FastifyReply): Encoding | undefined {
  const header = reply.request.headers['accept-encoding'];
  if (typeof header !== 'string') return undefined;
  return negotiate(header.toLowerCase().replace(/\*|x-gzip/g, 'gzip'), ENCODINGS) ?? undefined;
}

/** Whether a buffered answer of this reply's type goes through compression at all. */
function isCompressible(reply: FastifyReply): boolean {
  const type = reply.getHeader('content-type');
  return typeof type === 'string' && COMPRESSIBLE.test(type);
}

/**
 * Sends a buffered answer, compressed when it is JSON or XML, over the threshold and the client accepts br
 * or gzip. Such an answer always varies on Accept-Encoding, compressed this time or not, so no shared cache
 * hands an encoding to a client that did not ask for it. Other types are sent as they are.
 */
export function sendCompressible(reply: FastifyReply, body: Buffer | string): FastifyReply {
  if (!isCompressible(reply)) return reply.send(body);
  varyOnEncoding(reply);
  reply.compress(body);
  return reply;
}

/** Makes a kept form with the options the plugin is registered with, so both give the same bytes. */
const COMPRESS: Record<Encoding, (body: Buffer) => Buffer> = {
  br: (body) => brotliCompressSync(body, BROTLI_OPTIONS),
  gzip: (body) => gzipSync(body, ZLIB_OPTIONS),
};

/** Compressed forms kept for answers with a strong validator of their bytes, by encoding and ETag. */
const COMPRESSED_FORMS_MAX_BYTES = 16 * 1024 * 1024;

/**
 * The compressed forms of cached answers, one set per app: a cache hit is not compressed again
 * (docs/frontend.md, "Compression"). A form is made here, in one synchronous call with the plugin's
 * options, rather than taken from the plugin's output: its bytes are then in hand, with nothing to carry
 * from the reply to a hook.
 */
@Injectable()
export class CompressedForms {
  private readonly forms = new LRUCache<string, Buffer>({
    maxSize: COMPRESSED_FORMS_MAX_BYTES,
    sizeCalculation: (b, k) => b.length + k.length,
  });
  /** How often a compressed form was made and kept, and sent again as it was. */
  readonly counts = { kept: 0, reused: 0 };

  /**
   * As `sendCompressible`; `validator` is a strong ETag of exactly these bytes (a cached route's answer).
   * Up to the plugin's synchronous size, its compressed form by the client's encoding is made once and
   * kept; larger answers are compressed as a stream on every send, as are answers without a validator.
   */
  send(reply: FastifyReply, body: Buffer, validator?: string): FastifyReply {
    if (
      validator === undefined ||
      body.length < COMPRESS_THRESHOLD_BYTES ||
      body.length > COMPRESS_SYNC_MAX_BYTES ||
      !isCompressible(reply) ||
      // The plugin's opt-out: it then sends the answer as it is.
      reply.request.headers['x-no-compression'] !== undefined
    )
      return sendCompressible(reply, body);
    varyOnEncoding(reply);
    const encoding = encodingFor(reply);
    if (encoding === undefined) return reply.send(body);
    const key = `${encoding} ${validator}`;
    let form = this.forms.get(key);
    if (form !== undefined) {
      this.counts.reused++;
    } else {
      form = COMPRESS[encoding](body);
      this.forms.set(key, form);
      this.counts.kept++;
    }
    return reply.header('content-encoding', encoding).header('content-length', form.length).send(form);
  }
}
