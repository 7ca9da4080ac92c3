import type { ErrorEnvelope } from './error-envelope.js';
import type { ErrorShapeExtension } from './error-shape.registry.js';
import type { GatewayError } from './gateway-error.js';

/** How the filter builds one request's envelope (message scrubbed, vendor-shaped fields beside it). */
export type EnvelopeBuilder = (
  err: GatewayError,
  requestId: string,
  traceId: string | undefined,
  ext: ErrorShapeExtension | undefined,
) => ErrorEnvelope;

/** Stand-ins for the per-request ids while an envelope is serialised once (no real id has a control byte). */
const RID_MARK = '\u0001requestId\u0001';
const TRACE_MARK = '\u0001traceId\u0001';
const RID_JSON = JSON.stringify(RID_MARK);
const TRACE_JSON = ',"traceId":' + JSON.stringify(TRACE_MARK);

interface Template {
  /** What it was built from: a changed message, extension or set of secrets builds it again. */
  readonly message: string;
  readonly ext: ErrorShapeExtension | undefined;
  readonly secrets: number;
  /** The JSON around the request id and the optional trace id. */
  readonly head: string;
  readonly middle: string;
  readonly tail: string;
}

/**
 * The JSON envelope of an error that answers many requests (`GatewayError.shared`: a 429 storm's cooldown
 * refusal), built, scrubbed and serialised once per error and vendor shape; each request only fills in its
 * request id and trace id. The bytes are those the filter would build for the request (tested side by side).
 */
export class EnvelopeTemplates {
  private readonly memo = new WeakMap<GatewayError, Template>();

  /**
   * @param envelopeOf the filter's own builder, called once per template with stand-ins for the ids
   * @param secrets a number that changes whenever the set of secrets to scrub changes
   */
  constructor(
    private readonly envelopeOf: EnvelopeBuilder,
    private readonly secrets: () => number,
  ) {}

  /** The envelope as JSON, or undefined when this error's envelope cannot be templated (rebuilt each time). */
  json(
    err: GatewayError,
    ext: ErrorShapeExtension | undefined,
    requestId: string,
    traceId: string | undefined,
  ): string | undefined {
    let t = this.memo.get(err);
    if (t === undefined || t.message !== err.message || t.ext !== ext || t.secrets !== this.secrets()) {
      t = this.build(err, ext);
      if (t === undefined) return undefined;
      this.memo.set(err, t);
    }
    const trace = traceId === undefined ? '' : ',"traceId":' + JSON.stringify(traceId);
    return t.head + JSON.stringify(requestId) + t.middle + trace + t.tail;
  }

  private build(err: GatewayError, ext: ErrorShapeExtension | undefined): Template | undefined {
    const s = JSON.stringify(this.envelopeOf(err, RID_MARK, TRACE_MARK, ext));
    const r = s.indexOf(RID_JSON);
    const tr = s.indexOf(TRACE_JSON);
    // An extension that replaced `error` (or repeated a mark) leaves nothing to fill in safely.
    if (r < 0 || tr < r || s.indexOf(RID_JSON, r + 1) >= 0 || s.indexOf(TRACE_JSON, tr + 1) >= 0)
      return undefined;
    return {
      message: err.message,
      ext,
      secrets: this.secrets(),
      head: s.slice(0, r),
      middle: s.slice(r + RID_JSON.length, tr),
      tail: s.slice(tr + TRACE_JSON.length),
    };
  }
}
