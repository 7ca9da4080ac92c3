/**
 * Query strings as ordered pairs. The gateway forwards queries faithfully (order kept, credentials removed),
 * so it works on pairs, not on an object; `toQueryObject` gives the object the validation pipes see.
 */
export type QueryPairs = Array<[string, string]>;

function decode(s: string): string {
  if (s.indexOf('+') !== -1) s = s.replace(/\+/g, ' ');
  if (s.indexOf('%') === -1) return s;
  try {
    return decodeURIComponent(s);
  } catch {
    // A stray % is kept literally rather than failing the request.
    return s;
  }
}

export function parseQuery(qs: string): QueryPairs {
  const pairs: QueryPairs = [];
  if (!qs) return pairs;
  let start = 0;
  const len = qs.length;
  while (start <= len) {
    let end = qs.indexOf('&', start);
    if (end === -1) end = len;
    if (end > start) {
      const part = qs.slice(start, end);
      const eq = part.indexOf('=');
      if (eq === -1) pairs.push([decode(part), '']);
      else pairs.push([decode(part.slice(0, eq)), decode(part.slice(eq + 1))]);
    }
    start = end + 1;
  }
  return pairs;
}

/** `k[0]` / `k[]` / `k` all name parameter `k`. */
export function baseName(key: string): string {
  const i = key.indexOf('[');
  return i > 0 && key.endsWith(']') ? key.slice(0, i) : key;
}

/** Object form for DTO validation: repeated and indexed keys become arrays. */
export function toQueryObject(pairs: QueryPairs): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = Object.create(null) as Record<string, string | string[]>;
  for (const [k, v] of pairs) {
    const name = baseName(k);
    const indexed = name !== k;
    const prev = out[name];
    if (prev === undefined) out[name] = indexed ? [v] : v;
    else if (Array.isArray(prev)) prev.push(v);
    else out[name] = [prev, v];
  }
  return out;
}

// Keys keep their brackets unescaped so `countries[0]=HU` reaches a PHP upstream as its client sent it.
function encodeKey(k: string): string {
  return encodeURIComponent(k).replace(/%5B/gi, '[').replace(/%5D/gi, ']');
}

export function stringifyQuery(pairs: QueryPairs): string {
  let out = '';
  for (const [k, v] of pairs) {
    if (out) out += '&';
    out += encodeKey(k) + '=' + encodeURIComponent(v);
  }
  return out;
}

/** The raw query string of a request URL (without `?`). */
export function rawQueryOf(url: string): string {
  const i = url.indexOf('?');
  return i === -1 ? '' : url.slice(i + 1);
}

const PAIRS = Symbol('queryPairs');

interface ParsedQuery extends Record<string, string | string[]> {
  [PAIRS]?: QueryPairs;
}

/**
 * Fastify `querystringParser`: the object the validation pipes see, with the ordered pairs kept beside it
 * (non-enumerable) so the query is parsed once per request.
 */
export function fastifyQueryParser(qs: string): Record<string, unknown> {
  return queryFromPairs(parseQuery(qs));
}

/** The object `fastifyQueryParser` makes, from pairs already at hand (an in-process call built them). */
export function queryFromPairs(pairs: QueryPairs): Record<string, unknown> {
  const obj = toQueryObject(pairs) as ParsedQuery;
  Object.defineProperty(obj, PAIRS, { value: pairs, enumerable: false });
  return obj;
}

const NO_PAIRS: QueryPairs = [];

/** The ordered query pairs of a request parsed by `fastifyQueryParser`. */
export function queryPairsOf(req: { query: unknown; url: string }): QueryPairs {
  const q = req.query as ParsedQuery | undefined;
  return q?.[PAIRS] ?? (q ? parseQuery(rawQueryOf(req.url)) : NO_PAIRS);
}

export function queryObjectOf(req: { query: unknown }): Record<string, string | string[] | undefined> {
  return (req.query ?? {}) as Record<string, string | string[] | undefined>;
}
