import type { ErrorCode } from '../../core/errors/error-codes.js';
import type { UpstreamErrorInfo, UpstreamErrorMapper } from '../../proxy/pipeline.types.js';

/**
 * Reads EMIS `ApiError` bodies (`{"errors":[{"code":<int>,"detail":"…"}]}`, upstreams.md §4), the error
 * shape of the document and deal interfaces, in JSON or under the XML twin (`<response><errors>…`).
 *
 * The EMIS client checks `errors` before `data` and never reads the HTTP status, and the vendor may send
 * errors with HTTP 200, which a consumer must not take for data: `isErrorBody` recognises such a body so the normaliser turns
 * it into an error envelope with a real status. The classification of codes:
 * - 2000–2999 (the auth family, our fakes' choice; the vendor's are unknown) or an auth-like message →
 *   `UPSTREAM_AUTH_FAILED`, which makes the credentials stage re-login once and retry;
 * - 3000–3099 (bad call, from the client's exception classes) → 400, or 404 when it says "not found";
 * - a rate-limit code or message → 429; anything else on a 2xx → 502 `UPSTREAM_ERROR`;
 * - otherwise the HTTP status decides. The vendor code is kept as `upstreamCode`.
 */

const MAX_PARSE = 1_000_000;
const ERRORS_KEY = Buffer.from('"errors"');
// The first element under the XML root is <errors>: `<?xml …?><response><errors>`.
const XML_ERROR_HEAD = /^\s*(?:<\?xml[^>]*\?>\s*)?<[A-Za-z_][\w.-]*[^>]*>\s*<errors[\s>/]/;
const AUTH_MESSAGE =
  /session|token|unauthori[sz]ed|authenticat|log ?in\b|logged|credential|password|api[ _-]?key|access denied/i;
const RATE_MESSAGE = /too many requests|rate.?limit/i;
const NOT_FOUND_MESSAGE = /not found|does not exist|unknown (document|deal|file|company)/i;

export const EMIS_AUTH_CODES = { min: 2000, max: 2999 } as const;
export const EMIS_BAD_CALL_CODES = { min: 3000, max: 3099 } as const;
export const EMIS_RATE_LIMIT_CODE = 4029;

interface EmisErrorItem {
  code?: number;
  detail?: string;
}

function firstNonSpace(body: Buffer): number {
  for (let i = 0; i < body.length && i < 512; i++) {
    const c = body[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09 && c !== 0xef && c !== 0xbb && c !== 0xbf)
      return c;
  }
  return -1;
}

function isXml(body: Buffer, contentType: string | undefined): boolean {
  if (contentType?.includes('xml')) return true;
  if (contentType?.includes('json')) return false;
  return firstNonSpace(body) === 0x3c; /* < */
}

function toCode(v: unknown): number | undefined {
  if (typeof v === 'number' && Number.isInteger(v)) return v;
  if (typeof v === 'string' && /^\s*-?\d{1,9}\s*$/.test(v)) return Number(v);
  return undefined;
}

function toText(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v : undefined;
}

/** The top-level `errors` of a parsed JSON body, when it is the EMIS error marker (non-empty). */
function errorsOf(parsed: unknown): unknown {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return undefined;
  const e = (parsed as { errors?: unknown }).errors;
  if (e === undefined || e === null || e === false) return undefined;
  if (Array.isArray(e) && e.length === 0) return undefined;
  return e;
}

function parseJson(body: Buffer): unknown {
  if (body.length === 0 || body.length > MAX_PARSE) return undefined;
  try {
    return JSON.parse(body.toString('utf8'));
  } catch {
    return undefined;
  }
}

function itemFromJson(parsed: unknown): EmisErrorItem | undefined {
  const e = errorsOf(parsed);
  const top = parsed as Record<string, unknown> | undefined;
  let first: unknown = Array.isArray(e) ? e[0] : e;
  if (first === undefined && top && typeof top === 'object') {
    // Not the ApiError shape: take what a generic error body offers.
    first = top.error ?? top;
  }
  if (typeof first === 'string') return { detail: first };
  if (typeof first !== 'object' || first === null) return undefined;
  const o = first as Record<string, unknown>;
  const code = toCode(o.code) ?? toCode(o.errorCode) ?? toCode(o.status);
  const detail = toText(o.detail) ?? toText(o.message) ?? toText(o.description) ?? toText(o.error);
  return code === undefined && detail === undefined ? undefined : { code, detail };
}

function unescapeXml(s: string): string {
  return s
    .replace(/&lt;/g, '<')
    .replace(/&gt;/g, '>')
    .replace(/&quot;/g, '"')
    .replace(/&apos;/g, "'")
    .replace(/&amp;/g, '&');
}

function itemFromXml(body: Buffer): EmisErrorItem | undefined {
  const text = body.subarray(0, 65_536).toString('utf8');
  const start = text.indexOf('<errors');
  if (start === -1) return undefined;
  const scope = text.slice(start);
  const code = /<code>\s*(-?\d{1,9})\s*<\/code>/.exec(scope)?.[1];
  const detail = /<detail>([^<]*)<\/detail>/.exec(scope)?.[1];
  if (code === undefined && detail === undefined) return undefined;
  return {
    code: code === undefined ? undefined : Number(code),
    detail: detail === undefined ? undefined : unescapeXml(detail),
  };
}

function within(code: number | undefined, range: { min: number; max: number }): boolean {
  return code !== undefined && code >= range.min && code <= range.max;
}

/** The gateway code an EMIS error item stands for; undefined lets the HTTP status decide. */
export function classifyEmisError(item: EmisErrorItem, httpStatus: number): ErrorCode | undefined {
  const { code, detail = '' } = item;
  if (within(code, EMIS_AUTH_CODES)) return 'UPSTREAM_AUTH_FAILED';
  if (within(code, EMIS_BAD_CALL_CODES)) {
    // A missing sessionId/token is our credential's problem, not the consumer's call.
    if (/\b(sessionId|token)\b/.test(detail)) return 'UPSTREAM_AUTH_FAILED';
    return NOT_FOUND_MESSAGE.test(detail) ? 'NOT_FOUND' : 'UPSTREAM_BAD_REQUEST';
  }
  if (code === EMIS_RATE_LIMIT_CODE || RATE_MESSAGE.test(detail)) return 'UPSTREAM_RATE_LIMITED';
  if (AUTH_MESSAGE.test(detail)) return 'UPSTREAM_AUTH_FAILED';
  if (httpStatus >= 200 && httpStatus < 300) return 'UPSTREAM_ERROR';
  return undefined;
}

export const emisErrorMapper: UpstreamErrorMapper = {
  /** Cheap on the hot path: a JSON body is parsed only when it contains the bytes `"errors"`. */
  isErrorBody(body, contentType): boolean {
    if (body.length === 0) return false;
    if (isXml(body, contentType)) return XML_ERROR_HEAD.test(body.subarray(0, 512).toString('utf8'));
    if (body.indexOf(ERRORS_KEY) === -1) return false;
    return errorsOf(parseJson(body)) !== undefined;
  },

  read(status, body, contentType): UpstreamErrorInfo {
    if (body.length === 0) return {};
    const item = isXml(body, contentType) ? itemFromXml(body) : itemFromJson(parseJson(body));
    if (!item) return status >= 200 && status < 300 ? { code: 'UPSTREAM_ERROR' } : {};
    return {
      code: classifyEmisError(item, status),
      upstreamCode: item.code,
      message: item.detail,
    };
  },
};
