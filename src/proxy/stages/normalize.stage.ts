import { Readable } from 'node:stream';
import { XMLValidator } from 'fast-xml-parser';
import type { ErrorCode } from '../../core/errors/error-codes.js';
import { GatewayError } from '../../core/errors/gateway-error.js';
import type { WireFormat } from '../../core/http/negotiation.js';
import { parseRetryAfterSeconds } from '../../core/http/retry-after.js';
import { mayCache } from '../cache/cache-policy.js';
import type { TransportResponse } from '../transport/undici.transport.js';
import type {
  ProxyRequest,
  ProxyResponse,
  Stage,
  UpstreamErrorInfo,
  UpstreamErrorMapper,
} from '../pipeline.types.js';

export interface NormalizeOptions {
  readonly upstream: string;
  /** "the macroeconomic data service" */
  readonly title: string;
  readonly mapper: UpstreamErrorMapper;
  /**
   * Used when a 429 carries no usable reset header. Absent → `retryAfterSeconds` stays undefined, so a
   * later stage (the upstream limits) knows the vendor said nothing and applies its own default.
   */
  readonly defaultRetryAfterSeconds?: number;
  /**
   * Scrubs vendor text of our secrets before it is cut to length: a secret cut in half by the length
   * bound would no longer be recognised by the scrubbers outside.
   */
  readonly scrub?: (text: string) => string;
}

/** Upstream status → gateway code; a vendor mapper may override (e.g. an error sent with HTTP 200). */
export function codeForUpstreamStatus(status: number): ErrorCode {
  if (status === 401) return 'UPSTREAM_AUTH_FAILED';
  if (status === 403) return 'UPSTREAM_FORBIDDEN';
  if (status === 404 || status === 410) return 'NOT_FOUND';
  if (status === 413) return 'UPSTREAM_BAD_REQUEST';
  if (status === 415 || status === 406) return 'UNSUPPORTED_FORMAT';
  if (status === 429) return 'UPSTREAM_RATE_LIMITED';
  if (status === 504) return 'UPSTREAM_TIMEOUT';
  if (status >= 400 && status < 500) return 'UPSTREAM_BAD_REQUEST';
  return 'UPSTREAM_ERROR';
}

const MESSAGES: Partial<Record<ErrorCode, (title: string) => string>> = {
  UPSTREAM_AUTH_FAILED: (t) => `${t} rejected the gateway's credentials; operators have been alerted.`,
  UPSTREAM_RATE_LIMITED: (t) => `${t} is rate limiting; retry later.`,
  UPSTREAM_ERROR: (t) => `${t} failed to answer the request.`,
  UPSTREAM_TIMEOUT: (t) => `${t} timed out.`,
  UPSTREAM_FORBIDDEN: (t) => `The subscription to ${t} does not cover this data.`,
  NOT_FOUND: (t) => `${t} does not know the requested entity.`,
  UPSTREAM_BAD_REQUEST: (t) => `${t} rejected the request parameters.`,
  UNSUPPORTED_FORMAT: (t) => `${t} does not support the requested format.`,
};

function capitalise(s: string): string {
  return s.charAt(0).toUpperCase() + s.slice(1);
}

// Vendor text reaches consumers only trimmed, single-line and bounded.
function clean(text: string | undefined): string | undefined {
  if (!text) return undefined;
  // eslint-disable-next-line no-control-regex
  const t = text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
  return t ? (t.length > 300 ? t.slice(0, 300) + '…' : t) : undefined;
}

const JSON_START = new Set([0x7b /* { */, 0x5b /* [ */]);
const JSON_END = new Set([0x7d /* } */, 0x5d /* ] */]);

function isSpace(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/** First and last non-space byte positions, past a UTF-8 byte-order mark (PHP vendors send one). */
function trimmedBounds(body: Buffer): [number, number] {
  let i = body.length >= 3 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  let j = body.length - 1;
  while (i <= j && isSpace(body[i])) i++;
  while (j >= i && isSpace(body[j])) j--;
  return [i, j];
}

/**
 * Cheap sanity check of a JSON success body: it must start with `{`/`[` and end with `}`/`]`. Catches
 * truncated and HTML bodies without parsing every answer on the hot path.
 */
export function looksLikeJson(body: Buffer): boolean {
  const [i, j] = trimmedBounds(body);
  return i < j && JSON_START.has(body[i]) && JSON_END.has(body[j]);
}

/** The XML twin of `looksLikeJson`: starts with `<` and ends with `>`. */
export function looksLikeXml(body: Buffer): boolean {
  const [i, j] = trimmedBounds(body);
  return i < j && body[i] === 0x3c && body[j] === 0x3e;
}

/** Whether a body is a whole document in the format asked for: `JSON.parse`, or fast-xml-parser's validator. */
export function isValidBody(body: Buffer, format: WireFormat): boolean {
  const [i, j] = trimmedBounds(body);
  if (i > j) return false;
  if (format === 'xml') return XMLValidator.validate(body.toString('utf8', i, j + 1)) === true;
  try {
    JSON.parse(body.toString('utf8', i, j + 1));
    return true;
  } catch {
    return false;
  }
}

/** A content type that says the body is in the format asked for (`application/json`, `text/xml`, `…+json`). */
function typeMatches(contentType: string, format: WireFormat): boolean {
  return contentType.toLowerCase().includes(format);
}

const MEDIA_TYPE = /^[a-z0-9][a-z0-9.+-]{0,63}\/[a-z0-9][a-z0-9.+-]{0,63}$/i;

/**
 * Why a buffered success body cannot be passed on, or undefined when it can (only valid answers are served
 * and cached: a broken body would be served to everyone until it expires). Every answer gets the cheap checks: a content type of the format asked for
 * (a missing one is tolerated) and the right first and last byte. Answers that may be stored (a 200 on a
 * cacheable route) are parsed in full, so a body that merely looks right is never cached; other answers skip
 * that cost.
 */
function invalidBody(
  req: ProxyRequest,
  status: number,
  body: Buffer,
  contentType: string | undefined,
): string | undefined {
  const stored = status === 200 && mayCache(req.route);
  const format = req.format;
  const name = format === 'json' ? 'JSON' : 'XML';
  if (body.length === 0) return stored ? `sent an empty answer where ${name} was expected.` : undefined;
  if (contentType !== undefined && !typeMatches(contentType, format)) {
    const type = contentType.split(';')[0].trim();
    return `sent ${MEDIA_TYPE.test(type) ? type : 'another content type'} where ${name} was asked for.`;
  }
  const shaped = format === 'json' ? looksLikeJson(body) : looksLikeXml(body);
  if (!shaped || (stored && !isValidBody(body, format))) return `sent an answer that is not valid ${name}.`;
  return undefined;
}

const STRUCTURED = /json|xml/i;
const FILE_PEEK_BYTES = 65_536;

/**
 * Reads a stream up to `limit` bytes: the whole body when it ends within the limit, else a stream that
 * replays what was read and then the rest (the source is not destroyed, nothing beyond `limit` is held).
 */
async function peek(source: Readable, limit: number): Promise<{ whole?: Buffer; stream?: Readable }> {
  const it = source[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const chunks: Buffer[] = [];
  let size = 0;
  for (;;) {
    const r = await it.next();
    if (r.done) return { whole: chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size) };
    chunks.push(r.value);
    size += r.value.length;
    if (size > limit) break;
  }
  async function* replay(): AsyncGenerator<Buffer> {
    yield* chunks;
    chunks.length = 0;
    for (let r = await it.next(); !r.done; r = await it.next()) yield r.value;
  }
  const out = Readable.from(replay(), { objectMode: false });
  out.once('close', () => {
    if (!source.destroyed) source.destroy();
  });
  return { stream: out };
}

/** The deadline passed while a file's head was read. */
class PeekExpired extends Error {}

/** `peek`, bounded by the call's deadline: past it the source is destroyed (closing the upstream socket). */
async function peekBy(source: Readable, limit: number, deadline: number): ReturnType<typeof peek> {
  let timer: NodeJS.Timeout | undefined;
  const expired = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => {
        reject(new PeekExpired());
        source.destroy();
      },
      Math.max(0, deadline - Date.now()),
    );
  });
  try {
    return await Promise.race([peek(source, limit), expired]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Turns upstream answers into either a success the client can have as-is or a typed GatewayError.
 * Raw vendor error bodies never pass through: the vendor code and a cleaned message are kept.
 */
export function normalizeStage(opts: NormalizeOptions): Stage {
  if (!opts.mapper || typeof opts.mapper.read !== 'function')
    throw new Error('normalizeStage: mapper.read required');
  if (opts.defaultRetryAfterSeconds !== undefined && !(opts.defaultRetryAfterSeconds > 0))
    throw new Error('normalizeStage: defaultRetryAfterSeconds must be > 0');
  const title = capitalise(opts.title);

  const toError = (status: number, res: TransportResponse, info: UpstreamErrorInfo): GatewayError => {
    const code = info.code ?? codeForUpstreamStatus(status);
    const vendorMessage = clean(info.message && opts.scrub ? opts.scrub(info.message) : info.message);
    const base = MESSAGES[code]?.(title) ?? title + ' answered with an error.';
    return new GatewayError(code, {
      upstream: opts.upstream,
      upstreamStatus: status,
      upstreamCode: info.upstreamCode,
      message: vendorMessage ? `${base} (${vendorMessage})` : base,
      retryAfterSeconds:
        code === 'UPSTREAM_RATE_LIMITED'
          ? (parseRetryAfterSeconds(res.upstreamHeaders) ?? opts.defaultRetryAfterSeconds)
          : undefined,
      fromUpstream: true,
    });
  };

  const safeRead = (status: number, body: Buffer, contentType: string | undefined): UpstreamErrorInfo => {
    try {
      return opts.mapper.read(status, body, contentType);
    } catch {
      return {};
    }
  };

  return (next) => async (req) => {
    const res = (await next(req)) as TransportResponse;
    const status = res.status;
    const contentType = res.headers['content-type'];
    if (status >= 200 && status < 300) {
      if (res.body instanceof Readable) {
        // A file route that answered JSON/XML may be a vendor error on HTTP 200 (EMIS): look at its head.
        if (!opts.mapper.isErrorBody || !contentType || !STRUCTURED.test(contentType)) return res;
        let head: Awaited<ReturnType<typeof peek>>;
        try {
          head = await peekBy(res.body, FILE_PEEK_BYTES, req.deadline);
        } catch (cause) {
          if (cause instanceof PeekExpired)
            throw new GatewayError('UPSTREAM_TIMEOUT', {
              upstream: opts.upstream,
              message: `${title} did not answer in time.`,
            });
          throw new GatewayError('UPSTREAM_ERROR', {
            upstream: opts.upstream,
            upstreamStatus: status,
            message: `${title} broke off its answer.`,
            fromUpstream: true,
            cause,
          });
        }
        if (head.whole && opts.mapper.isErrorBody(head.whole, contentType))
          throw toError(status, res, safeRead(status, head.whole, contentType));
        return { ...res, body: head.whole ?? head.stream! };
      }
      const body = res.body;
      if (opts.mapper.isErrorBody?.(body, contentType))
        throw toError(status, res, safeRead(status, body, contentType));
      const invalid = invalidBody(req, status, body, contentType);
      if (invalid !== undefined)
        throw new GatewayError('UPSTREAM_ERROR', {
          upstream: opts.upstream,
          upstreamStatus: status,
          upstreamCode: 'INVALID_BODY',
          message: `${title} ${invalid}`,
          fromUpstream: true,
        });
      return {
        status: res.status,
        headers: res.headers,
        body,
        upstreamMs: res.upstreamMs,
      } satisfies ProxyResponse;
    }
    let body: Buffer;
    if (res.body instanceof Readable) {
      // A file route that failed: its error body is small; read it for the mapper.
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const c of res.body) {
        size += (c as Buffer).length;
        if (size > 65_536) break;
        chunks.push(c as Buffer);
      }
      res.body.destroy();
      body = Buffer.concat(chunks);
    } else body = res.body;
    throw toError(status, res, safeRead(status, body, contentType));
  };
}
