import { GatewayError } from '../core/errors/gateway-error.js';

/** Headers an item may set; the key, the origin and everything else come from the batch call itself. */
export const BATCH_ITEM_HEADERS = ['accept', 'accept-language', 'cache-control'] as const;
type ItemHeader = (typeof BATCH_ITEM_HEADERS)[number];

export interface BatchItem {
  /** The caller's id for the item (default: its index). */
  readonly id: string;
  /** Gateway path with its query, e.g. `/macro/feeds?limit=2`; duplicate slashes collapsed. */
  readonly path: string;
  readonly headers: Partial<Record<ItemHeader, string>>;
}

export interface BatchCall {
  readonly items: readonly BatchItem[];
  /** Overall deadline of the call. */
  readonly timeoutMs: number;
}

export interface BatchLimits {
  readonly maxItems: number;
  /** The default and the longest deadline a caller may ask for. */
  readonly timeoutMs: number;
}

const CALL_KEYS = new Set(['requests', 'timeoutMs']);
const ITEM_KEYS = new Set(['id', 'method', 'path', 'headers']);
const ITEM_HEADERS: ReadonlySet<string> = new Set(BATCH_ITEM_HEADERS);
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f]/;

function invalid(parameter: string, message: string): GatewayError {
  return new GatewayError('VALIDATION_FAILED', { parameter, message });
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function parseItem(raw: unknown, i: number): BatchItem {
  const at = `requests[${i}]`;
  if (!isObject(raw)) throw invalid(at, `${at} must be an object {"path": "/macro/…"}.`);
  for (const k of Object.keys(raw))
    if (!ITEM_KEYS.has(k))
      throw invalid(`${at}.${k}`, `${at} has an unknown field (id, method, path, headers).`);

  let id = String(i);
  if (raw.id !== undefined) {
    if (typeof raw.id === 'number' && Number.isInteger(raw.id)) id = String(raw.id);
    else if (typeof raw.id === 'string' && raw.id.length > 0 && raw.id.length <= 128) id = raw.id;
    else throw invalid(`${at}.id`, `${at}.id must be a string of 1–128 characters or an integer.`);
  }

  if (raw.method !== undefined && (typeof raw.method !== 'string' || raw.method.toUpperCase() !== 'GET'))
    throw invalid(
      `${at}.method`,
      `${at}.method: only GET is allowed in a batch; send writes as separate calls.`,
    );

  const path = raw.path;
  if (typeof path !== 'string' || !path.startsWith('/') || path.length > 16 * 1024 || CONTROL.test(path))
    throw invalid(`${at}.path`, `${at}.path must be a gateway path such as "/macro/feeds?limit=2".`);

  const headers: Partial<Record<ItemHeader, string>> = {};
  if (raw.headers !== undefined) {
    if (!isObject(raw.headers)) throw invalid(`${at}.headers`, `${at}.headers must be an object.`);
    for (const [name, value] of Object.entries(raw.headers)) {
      const lower = name.toLowerCase();
      if (!ITEM_HEADERS.has(lower))
        throw invalid(
          `${at}.headers.${name}`,
          `${at}.headers may set only ${BATCH_ITEM_HEADERS.join(', ')}; items use the batch call's key.`,
        );
      if (typeof value !== 'string' || value.length > 1024 || CONTROL.test(value))
        throw invalid(`${at}.headers.${name}`, `${at}.headers.${name} must be a short string.`);
      headers[lower as ItemHeader] = value;
    }
  }

  // `//host/x` would read as a host to a URL parser: collapse duplicate slashes, as the router does anyway.
  const q = path.indexOf('?');
  const clean =
    (q === -1 ? path : path.slice(0, q)).replace(/\/{2,}/g, '/') + (q === -1 ? '' : path.slice(q));
  return { id, path: clean, headers };
}

/**
 * Parses and checks a `POST /batch` body (request bodies arrive as raw bytes): `{"requests": [{"id", "path",
 * "headers"}…], "timeoutMs"}`. Any problem is a 400 VALIDATION_FAILED naming the field; a write in the
 * batch refuses the whole call, before any item runs.
 */
export function parseBatchCall(body: unknown, limits: BatchLimits): BatchCall {
  const text = Buffer.isBuffer(body) ? body.toString('utf8') : typeof body === 'string' ? body : '';
  if (text.trim() === '')
    throw invalid('body', 'The batch body must be JSON: {"requests": [{"path": "/macro/feeds"}]}.');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw invalid('body', 'The batch body is not valid JSON.');
  }
  if (!isObject(doc)) throw invalid('body', 'The batch body must be a JSON object {"requests": […]}.');
  for (const k of Object.keys(doc))
    if (!CALL_KEYS.has(k)) throw invalid(k, `Unknown batch field "${k}" (requests, timeoutMs).`);

  const requests = doc.requests;
  if (!Array.isArray(requests) || requests.length === 0 || requests.length > limits.maxItems)
    throw invalid('requests', `requests must be an array of 1–${limits.maxItems} items.`);
  const items = requests.map(parseItem);
  const seen = new Set<string>();
  for (const [i, item] of items.entries()) {
    if (seen.has(item.id)) throw invalid(`requests[${i}].id`, `requests[${i}].id repeats an earlier id.`);
    seen.add(item.id);
  }

  let timeoutMs = limits.timeoutMs;
  if (doc.timeoutMs !== undefined) {
    const t = doc.timeoutMs;
    if (typeof t !== 'number' || !Number.isInteger(t) || t < 1 || t > limits.timeoutMs)
      throw invalid('timeoutMs', `timeoutMs must be a whole number of milliseconds, 1–${limits.timeoutMs}.`);
    timeoutMs = t;
  }
  return { items, timeoutMs };
}
