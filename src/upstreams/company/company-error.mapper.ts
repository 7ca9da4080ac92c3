import type { UpstreamErrorInfo, UpstreamErrorMapper } from '../../proxy/pipeline.types.js';

/**
 * Reads the company interface's `ErrorResponse` / `JsonErrorResponseData`. Their fields are not public
 * (upstreams.md §3), so this takes whatever a body offers — `errors` (array or object), `error` (object or
 * string), `message`, `code`, `detail`, possibly nested under `data` — and leaves the gateway code to the
 * HTTP status (the one thing every body agrees on). Never throws, whatever the body.
 */

const MAX_PARSE = 1_000_000;
const MAX_DEPTH = 3;

type Obj = Record<string, unknown>;

function isObj(v: unknown): v is Obj {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function text(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() !== '' ? v : undefined;
}

function code(v: unknown): string | number | undefined {
  if (typeof v === 'number' && Number.isFinite(v)) return v;
  if (typeof v === 'string' && v.trim() !== '' && v.length <= 100) return v;
  return undefined;
}

function fromItem(v: unknown, depth: number): UpstreamErrorInfo {
  if (depth > MAX_DEPTH) return {};
  if (typeof v === 'string') return { message: text(v) };
  if (Array.isArray(v)) return v.length > 0 ? fromItem(v[0], depth + 1) : {};
  if (!isObj(v)) return {};
  // The error may sit one level down (`errors`, `error`, `data`), with its siblings as fallback.
  const nested = v.errors ?? v.error ?? (isObj(v.data) || Array.isArray(v.data) ? v.data : undefined);
  const inner = nested !== undefined ? fromItem(nested, depth + 1) : {};
  const own =
    text(v.message) ??
    text(v.detail) ??
    text(v.error_description) ??
    text(v.description) ??
    text(v.title) ??
    text(v.reason);
  // A nested object is the specific error; a nested string (`"error":"invalid_token"`) is only a label.
  const message = typeof nested === 'string' ? (own ?? inner.message) : (inner.message ?? own);
  const upstreamCode =
    inner.upstreamCode ?? code(v.code) ?? code(v.errorCode) ?? code(v.error_code) ?? code(v.type);
  return { upstreamCode, message };
}

export const companyErrorMapper: UpstreamErrorMapper = {
  read(_status, body): UpstreamErrorInfo {
    if (body.length === 0 || body.length > MAX_PARSE) return {};
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return {};
    }
    const info = fromItem(parsed, 0);
    const out: UpstreamErrorInfo = {};
    if (info.upstreamCode !== undefined) out.upstreamCode = info.upstreamCode;
    if (info.message !== undefined) out.message = info.message;
    return out;
  },
};
