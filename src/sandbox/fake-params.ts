// Parameter parsing shared by the fakes: request bodies (form or JSON), the vendors' loose booleans
// and dates, and EMIS-style array parameters.
import type { FakeRequest } from './fake-upstream.js';

export type Fields = Record<string, unknown>;

/** Fields of a write: `application/x-www-form-urlencoded` or JSON (object, or array under `items`). */
export function readFields(req: FakeRequest): { fields: Fields } | { error: string } {
  const text = req.body.toString('utf8').trim();
  if (text === '') return { fields: {} };
  const type = String(req.headers['content-type'] ?? '').toLowerCase();
  if (type.includes('json') || ((text.startsWith('{') || text.startsWith('[')) && !type.includes('form'))) {
    try {
      const parsed: unknown = JSON.parse(text);
      if (Array.isArray(parsed)) return { fields: { items: parsed } };
      if (typeof parsed === 'object' && parsed !== null) return { fields: parsed as Fields };
      return { error: 'JSON body must be an object or an array' };
    } catch {
      return { error: 'Request body is not valid JSON' };
    }
  }
  const fields: Fields = {};
  for (const [k, v] of new URLSearchParams(text)) fields[k] = v;
  return { fields };
}

/** A field as a string (numbers and booleans are stringified); undefined when absent or empty. */
export function str(value: unknown): string | undefined {
  if (typeof value === 'string') return value === '' ? undefined : value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return undefined;
}

/** true/false, True/False, 1/0 (what the vendors' clients send); undefined when absent, null when invalid. */
export function bool(value: unknown): boolean | undefined | null {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'boolean') return value;
  const s = str(value)?.toLowerCase();
  if (s === 'true' || s === '1') return true;
  if (s === 'false' || s === '0') return false;
  return null;
}

/** A whole number; undefined when absent, NaN when invalid. */
export function int(value: unknown): number | undefined {
  const s = str(value);
  if (s === undefined) return undefined;
  return /^-?\d+$/.test(s.trim()) ? Number(s) : Number.NaN;
}

/** YYYY-MM-DD, YYYYMMDD or an ISO datetime (no zone = UTC) to epoch ms; undefined when absent, NaN when invalid. */
export function dateParam(value: string | null | undefined): number | undefined {
  if (value === null || value === undefined || value === '') return undefined;
  const v = value.trim();
  let m = /^(\d{4})(\d{2})(\d{2})$/.exec(v);
  if (m) return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(v);
  if (m) return Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3]));
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/.test(v)) {
    const withZone = /(Z|[+-]\d{2}:?\d{2})$/.test(v) ? v.replace(/([+-]\d{2})(\d{2})$/, '$1:$2') : `${v}Z`;
    const ms = Date.parse(withZone);
    return Number.isNaN(ms) ? Number.NaN : ms;
  }
  return Number.NaN;
}

/** Every value of a list parameter: repeated keys and comma lists (`status=ACTIVE%2CDELETED`). */
export function listParam(query: URLSearchParams, name: string): string[] {
  return query
    .getAll(name)
    .flatMap((v) => v.split(','))
    .map((v) => v.trim())
    .filter((v) => v !== '');
}

/**
 * EMIS arrays: `k[0]=a&k[1]=b`, `k[]=a`, bare `k=a` (and comma lists), in index order.
 */
export function emisArray(params: URLSearchParams, name: string): string[] {
  const indexed: Array<[number, string]> = [];
  const plain: string[] = [];
  for (const [key, value] of params) {
    if (key === name || key === `${name}[]`) plain.push(...value.split(','));
    else {
      const m = /^(.+)\[(\d+)\]$/.exec(key);
      if (m && m[1] === name) indexed.push([Number(m[2]), value]);
    }
  }
  indexed.sort((a, b) => a[0] - b[0]);
  return [...indexed.map(([, v]) => v), ...plain].map((v) => v.trim()).filter((v) => v !== '');
}

/** Pages a list with offset/limit. */
export function page<T>(items: readonly T[], offset: number, limit: number): T[] {
  return items.slice(offset, offset + limit);
}
