/**
 * How vendor stacks read parameter names, written here from their documented behaviour and independently of
 * the gateway's normaliser, so the tests check the gateway against the vendors rather than against itself.
 */

/** PHP's `urldecode` of a name: `+` is a space, each `%XX` a byte, a stray `%` literal; bytes as latin1. */
export function phpUrlDecode(raw: string): string {
  const bytes: number[] = [];
  const src = Buffer.from(raw, 'utf8');
  for (let i = 0; i < src.length; i++) {
    const c = src[i];
    const hex = (n: number) => /[0-9a-fA-F]/.test(String.fromCharCode(n));
    if (c === 0x2b) bytes.push(0x20);
    else if (c === 0x25 && i + 2 < src.length && hex(src[i + 1]) && hex(src[i + 2])) {
      bytes.push(parseInt(String.fromCharCode(src[i + 1], src[i + 2]), 16));
      i += 2;
    } else bytes.push(c);
  }
  return Buffer.from(bytes).toString('latin1');
}

/**
 * The variable PHP registers for a decoded name (`php_register_variable_ex`), or undefined when PHP drops
 * it: the name ends at a NUL, leading spaces go, ` ` and `.` become `_`, `name[…]` is an array of `name`,
 * and a `[` without a `]` after it becomes `_`.
 */
export function phpVarName(decoded: string): string | undefined {
  let s = decoded;
  const nul = s.indexOf('\u0000');
  if (nul !== -1) s = s.slice(0, nul);
  s = s.replace(/^ +/, '');
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s[i];
    if (c === ' ' || c === '.') out += '_';
    else if (c === '[') {
      if (s.indexOf(']', i + 1) !== -1) return out === '' ? undefined : out;
      out += '_' + s.slice(i + 1);
      break;
    } else out += c;
  }
  return out === '' ? undefined : out;
}

/** `a=1&b=2` as PHP's `$_GET` / `$_POST` reads it: [registered name, raw value] in order. */
export function phpParams(qs: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const part of qs.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const name = phpVarName(phpUrlDecode(eq === -1 ? part : part.slice(0, eq)));
    if (name !== undefined) out.push([name, eq === -1 ? '' : phpUrlDecode(part.slice(eq + 1))]);
  }
  return out;
}

/**
 * A lenient stack's reading (trimming, case-insensitive, `k[…]` as `k`, Rack's leading brackets): the name
 * lower-cased, as it would be compared.
 */
export function lenientName(decoded: string): string {
  let s = decoded;
  const nul = s.indexOf('\u0000');
  if (nul !== -1) s = s.slice(0, nul);
  s = s.trim().replace(/^[[\]]+/, '');
  const b = s.search(/[[\]]/);
  if (b !== -1) s = s.slice(0, b);
  return s.trim().toLowerCase();
}

export const CREDENTIAL_NAMES = ['token', 'sessionId'] as const;

/** Whether PHP or a lenient stack would read this raw (still encoded) name as a credential. */
export function vendorReadsCredential(rawName: string): boolean {
  const decoded = phpUrlDecode(rawName);
  const php = phpVarName(decoded);
  if (php !== undefined && (CREDENTIAL_NAMES as readonly string[]).includes(php)) return true;
  const lenient = lenientName(decoded);
  return CREDENTIAL_NAMES.some((n) => n.toLowerCase() === lenient);
}

/** The credentials a vendor finds in a raw query or form body, as [name as read, value]. */
export function credentialsIn(qs: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  for (const part of qs.split('&')) {
    if (part === '') continue;
    const eq = part.indexOf('=');
    const rawName = eq === -1 ? part : part.slice(0, eq);
    if (vendorReadsCredential(rawName))
      out.push([rawName, phpUrlDecode(eq === -1 ? '' : part.slice(eq + 1))]);
  }
  return out;
}
