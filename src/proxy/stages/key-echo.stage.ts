import { Readable, Transform, type TransformCallback } from 'node:stream';
import { GatewayError } from '../../core/errors/gateway-error.js';
import { SecretMatcher } from '../../core/logging/secret-forms.js';
import type { LinkRewriter } from '../links/link-rewriter.js';
import type { ProxyResponse, Stage } from '../pipeline.types.js';

export interface KeyEchoStageOptions {
  /** The upstream credential's secrets in use (a stable list instance until the credential changes). */
  readonly secrets: () => readonly string[];
  /** Scrubs text of every secret the gateway holds (error messages and vendor codes). */
  readonly redact: (text: string) => string;
  /** Turns credential-bearing links to the upstream into gateway-signed links before anything is masked. */
  readonly links?: LinkRewriter;
  /** Called with the number of echoes removed (metrics). */
  readonly onScrub?: (count: number) => void;
}

/** Validators are dropped, not rewritten, when they carry a secret: a masked ETag would be a false one. */
const DROP_WHEN_ECHOED: ReadonlySet<string> = new Set(['etag', 'last-modified']);

/**
 * Scrubs a streamed body without holding it: each chunk is searched, and the last `max - 1` bytes are held
 * back until the next chunk shows whether a form straddles the boundary. Matches are masked byte for byte
 * (`*`), so a declared Content-Length stays true. Clean chunks pass as views, never copied.
 */
class StreamScrubber extends Transform {
  private tail: Buffer = Buffer.alloc(0);
  private readonly hold: number;

  constructor(
    private readonly matcher: SecretMatcher,
    private readonly onScrub: (count: number) => void,
  ) {
    super();
    this.hold = Math.max(0, matcher.maxBytes - 1);
  }

  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    let buf = chunk;
    if (this.tail.length > 0) {
      // A form that starts in the held tail ends within the next `hold` bytes.
      const window = Buffer.concat([this.tail, chunk.subarray(0, this.hold)]);
      if (this.matcher.inBuffer(window)) buf = Buffer.concat([this.tail, chunk]);
      else this.push(this.tail);
      this.tail = Buffer.alloc(0);
    }
    const r = this.matcher.scrubBuffer(buf, true);
    if (r.count > 0) this.onScrub(r.count);
    const cut = Math.max(0, r.body.length - this.hold);
    if (cut > 0) this.push(r.body.subarray(0, cut));
    this.tail = r.body.subarray(cut);
    done();
  }

  override _flush(done: TransformCallback): void {
    if (this.tail.length > 0) this.push(this.tail);
    done();
  }
}

function scrubStream(source: Readable, matcher: SecretMatcher, onScrub: (count: number) => void): Readable {
  const out = new StreamScrubber(matcher, onScrub);
  source.on('error', (err) => out.destroy(err));
  out.once('close', () => {
    if (!source.destroyed) source.destroy();
  });
  return source.pipe(out);
}

/**
 * Key custody on the way back (a vendor may echo its key in any spelling, anywhere): no form of the upstream
 * credential's secrets (see secret-forms.ts) leaves in an answer's body or passed-through headers, nor in
 * an error's message or vendor code. Links to the upstream that carry the credential become gateway-signed
 * links first, so they still work. A body without any match is passed on as is, not copied.
 */
export function keyEchoStage(opts: KeyEchoStageOptions): Stage {
  if (typeof opts.secrets !== 'function' || typeof opts.redact !== 'function')
    throw new Error('keyEchoStage: secrets and redact required');
  const record = opts.onScrub;
  const onScrub = (count: number): void => {
    if (count > 0) record?.(count);
  };
  // A credential hands out the same list until its secrets change: the matcher is built once per list.
  let current: { readonly secrets: readonly string[]; readonly matcher: SecretMatcher } | undefined;
  const matcherOf = (secrets: readonly string[]): SecretMatcher => {
    if (current?.secrets !== secrets) current = { secrets, matcher: new SecretMatcher(secrets) };
    return current.matcher;
  };

  const scrubHeaders = (headers: Record<string, string>, matcher: SecretMatcher): Record<string, string> => {
    let out: Record<string, string> | undefined;
    for (const name in headers) {
      const value = headers[name];
      if (!matcher.inText(value)) continue;
      out ??= { ...headers };
      if (DROP_WHEN_ECHOED.has(name)) {
        delete out[name];
        onScrub(1);
      } else {
        const r = matcher.scrubText(value);
        out[name] = r.text;
        onScrub(r.count);
      }
    }
    return out ?? headers;
  };

  const scrubError = (err: unknown): unknown => {
    if (!(err instanceof GatewayError)) return err;
    const message = opts.redact(err.message);
    if (message !== err.message) {
      Object.defineProperty(err, 'message', { value: message });
      onScrub(1);
    }
    if (typeof err.upstreamCode === 'string') {
      const code = opts.redact(err.upstreamCode);
      if (code !== err.upstreamCode) {
        Object.defineProperty(err, 'upstreamCode', { value: code });
        onScrub(1);
      }
    }
    return err;
  };

  const onError = (err: unknown): never => {
    throw scrubError(err);
  };
  // Nothing here awaits: one `.then` on the next handler's promise, no async wrapper.
  return (next) => (req) => Promise.resolve(next(req)).then(scrubAnswer, onError);

  function scrubAnswer(res: ProxyResponse): ProxyResponse {
    const matcher = matcherOf(opts.secrets());
    if (matcher.empty) return res;
    let headers = scrubHeaders(res.headers, matcher);
    let body = res.body;
    if (body instanceof Readable) body = scrubStream(body, matcher, onScrub);
    else if (matcher.inBuffer(body)) {
      if (opts.links) {
        const l = opts.links.rewrite(body, headers['content-type'], matcher);
        body = l.body;
        onScrub(l.count);
      }
      const s = matcher.scrubBuffer(body);
      body = s.body;
      onScrub(s.count);
      // A file route's small answer arrives whole with the vendor's length, which no longer holds.
      if ('content-length' in headers) {
        headers = { ...headers };
        delete headers['content-length'];
      }
    }
    return headers === res.headers && body === res.body ? res : { ...res, headers, body };
  }
}
