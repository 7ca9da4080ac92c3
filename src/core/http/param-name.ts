/**
 * Parameter names as a vendor's stack will read them, for the credential strip (a name the vendor reads as
 * its key parameter is a key, however it is spelled). Vendor-neutral on purpose: every upstream gets the same
 * superset of readings, so no vendor can read a name as a credential that the strip let through. Names
 * that some stack reads alike get one comparison key; the readings folded in:
 *
 * - PHP (the EMIS document and deal APIs): a name ends at a NUL (C strings), leading spaces are dropped,
 *   `name[…]` is an array of `name`, ` ` and `.` become `_`;
 * - Rack and qs: leading brackets are skipped (`[token]` reads as `token`), `token]x` and `token.x`
 *   (qs `allowDots`, Spring binding) name `token`;
 * - stacks that trim (Java, .NET), compare case-insensitively (also by upper case: `ſ`, `ı`, `K`) or
 *   accent-insensitively, fold compatibility forms (full-width letters) or map snake or kebab case to
 *   camel case (`session_id`).
 *
 * The cost of the superset is that a harmless parameter spelt like a credential (`Session-ID`, `token.x`)
 * is dropped too; no vendor documents such a name, and a lost odd parameter is cheaper than a second key.
 */

// Whitespace, control characters, invisible format characters and combining marks: trimmed, skipped or
// ignored by one stack or another, never part of a name a vendor documents.
const NOISE = /[\s\p{Cc}\p{Cf}\p{M}_-]+/gu;
const LEADING = /^[\s\p{Cc}\p{Cf}\p{M}[\].]+/u;
// A name ends at the first bracket (array/index syntax) or dot (object path syntax).
const END = /[[\].]/;
const PLAIN = /^[A-Za-z0-9_-]*$/;
const SNAKE = /[_-]/g;

/** The comparison key of a (decoded) parameter name; two names with the same key may be read alike. */
export function normalizeParamName(raw: string): string {
  // Fast path: the usual `limit`, `start_date`, `token`.
  if (PLAIN.test(raw)) return raw.toLowerCase().replace(SNAKE, '');
  // Case folded both ways, then compatibility-decomposed so accents and marks fall away as noise.
  let s = raw.toUpperCase().toLowerCase().normalize('NFKD');
  const nul = s.indexOf('\u0000');
  if (nul !== -1) s = s.slice(0, nul);
  s = s.replace(LEADING, '');
  const end = s.search(END);
  if (end !== -1) s = s.slice(0, end);
  return s.replace(NOISE, '');
}

/** Whether a decoded parameter name may be read as one of a set of names. */
export type ParamNameTest = (rawName: string) => boolean;

const ESCAPE = /%([0-9A-Fa-f]{2})/g;

/**
 * Decodes `%XX` escapes as a lenient server does: byte by byte (a NUL included), a stray `%` literal,
 * invalid UTF-8 replaced. `decodeURIComponent` refuses `sessionId%00%FF` whole; PHP reads `sessionId`.
 */
export function lenientPercentDecode(s: string): string {
  if (s.indexOf('%') === -1) return s;
  const parts: Buffer[] = [];
  let last = 0;
  for (const m of s.matchAll(ESCAPE)) {
    parts.push(Buffer.from(s.slice(last, m.index), 'utf8'), Buffer.of(parseInt(m[1], 16)));
    last = m.index + m[0].length;
  }
  parts.push(Buffer.from(s.slice(last), 'utf8'));
  return Buffer.concat(parts).toString('utf8');
}

/**
 * Builds the test for a set of names once (at start-up), so a request costs one normalisation per name. A
 * name that still holds `%XX` escapes (a query name the strict decoder left as sent) is judged decoded too.
 */
export function paramNameMatcher(names: readonly string[]): ParamNameTest {
  const keys = new Set(names.map(normalizeParamName));
  if (keys.size === 0 || keys.has('')) throw new Error('paramNameMatcher: names must be non-empty');
  return (rawName) =>
    keys.has(normalizeParamName(rawName)) ||
    (rawName.indexOf('%') !== -1 && keys.has(normalizeParamName(lenientPercentDecode(rawName))));
}
