/**
 * Every spelling of a secret a vendor stack may echo: a key must leave in no form at all.
 * Vendor keys and session ids are base64 (`/`, `+`, `=`); a JSON, XML, HTML, URL or form encoder may write
 * any of their characters its own way (`\/`, `\u002F`, `&#47;`, `&sol;`, `%2f`, `+` for a space…), and
 * one string may mix them. So a secret is not searched as a list of spellings: a text that holds escapes
 * is also searched decoded, every escape token of ESCAPINGS replaced by the character it stands for, and
 * what is found there maps back to the bytes that spelled it. A new escaping is one entry of that table.
 *
 * Forms are computed once per secret (at registration and when a session is renewed), never per request.
 */

/** Shorter forms are not searched for: they would mangle ordinary text, and no real key is that short. */
export const MIN_FORM_LENGTH = 6;

/** An escape token read at an offset: the character it stands for and how long it is. */
interface Token {
  readonly char: string;
  readonly length: number;
}

/**
 * One escaping: the character that starts its tokens, how to read one token at an offset (undefined when
 * the text there is not one), and for journals and tests how it writes a character (canonical hex).
 */
interface Escaping {
  /** Who writes it. */
  readonly by: string;
  readonly introducer: '\\' | '%' | '&';
  readonly read: (text: string, at: number) => Token | undefined;
  readonly example?: (ch: string, upper: boolean) => string | undefined;
  /**
   * Tokens so frequent in answers that, to find out whether a text holds an echo, they are replaced by a
   * native split and join before the scan (PHP writes every `/` of every link as `\/`).
   */
  readonly frequent?: readonly (readonly [token: string, char: string])[];
  /**
   * Its tokens that stand for a letter or digit, as a case-insensitive pattern source (none: it has none). Encoders seldom
   * escape those, so an answer holding none has every letter and digit of any echo as written: the longest
   * run of them in a form is then a literal anchor (see SecretMatcher), and only an answer holding an anchor
   * or one of these tokens is decoded.
   */
  readonly alphanumeric?: string;
}

export function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

const hex = (n: number, width: number, upper: boolean): string => {
  const h = n.toString(16).padStart(width, '0');
  return upper ? h.toUpperCase() : h;
};

/** The value of `n` hex digits (either case) at `at`, or -1. */
function hexAt(text: string, at: number, n: number): number {
  let v = 0;
  for (let i = at; i < at + n; i++) {
    const c = text.charCodeAt(i);
    const d =
      c >= 0x30 && c <= 0x39
        ? c - 0x30
        : c >= 0x41 && c <= 0x46
          ? c - 0x37
          : c >= 0x61 && c <= 0x66
            ? c - 0x57
            : -1;
    if (d < 0) return -1;
    v = v * 16 + d;
  }
  return v;
}

/** Named references HTML5 and XML define for the characters keys and session ids are made of. */
const NAMED_REFERENCES = {
  amp: '&',
  AMP: '&',
  lt: '<',
  LT: '<',
  gt: '>',
  GT: '>',
  quot: '"',
  QUOT: '"',
  apos: "'",
  sol: '/',
  plus: '+',
  equals: '=',
  percnt: '%',
  num: '#',
  colon: ':',
  semi: ';',
  quest: '?',
  excl: '!',
  dollar: '$',
  lpar: '(',
  rpar: ')',
  ast: '*',
  midast: '*',
  comma: ',',
  period: '.',
  commat: '@',
  lsqb: '[',
  lbrack: '[',
  rsqb: ']',
  rbrack: ']',
  bsol: '\\',
  lowbar: '_',
  UnderBar: '_',
  lcub: '{',
  lbrace: '{',
  rcub: '}',
  rbrace: '}',
  verbar: '|',
  vert: '|',
  VerticalLine: '|',
  Hat: '^',
  grave: '`',
  DiacriticalGrave: '`',
  hyphen: '-',
  dash: '-',
  NewLine: '\n',
  Tab: '\t',
  nbsp: '\u00a0',
} as const satisfies Record<string, string>;
const LONGEST_NAME = Math.max(...Object.keys(NAMED_REFERENCES).map((n) => n.length));

const JSON_SHORT = { '/': '/', '"': '"', '\\': '\\', b: '\b', f: '\f', n: '\n', r: '\r', t: '\t' } as const;
const JSON_SHORT_OF: Readonly<Record<string, string>> = { '/': '\\/', '"': '\\"', '\\': '\\\\' };

/** A numeric reference to a letter or digit (`#97;`, `#x61;`), case-insensitive. */
const NUMERIC_ALPHANUMERIC = '#(?:x0{0,8}[3-7][0-9a-f]|0{0,8}(?:4[89]|[5-9][0-9]|1[01][0-9]|12[0-2]));';
/** Leading zeros a numeric reference may carry (bounded: a match has a known longest length). */
const MAX_ZEROS = 8;
/** Longest spelling of one character by any escaping (`&amp;#x00000000` + 6 hex digits + `;` is 22). */
const LONGEST_SPELLING = 32;

/** A character reference (`#47;`, `#x2F;`, `#X02f;`, `sol;`) at `at`, just after its `&`. */
function readReference(text: string, at: number): Token | undefined {
  if (text[at] !== '#') {
    let semi = at;
    while (semi - at <= LONGEST_NAME && semi < text.length && text[semi] !== ';') semi++;
    if (text[semi] !== ';') return undefined;
    const char = (NAMED_REFERENCES as Record<string, string>)[text.slice(at, semi)];
    return char === undefined ? undefined : { char, length: semi - at + 1 };
  }
  const x = text[at + 1] === 'x' || text[at + 1] === 'X';
  let i = at + (x ? 2 : 1);
  const zeros = i;
  while (text[i] === '0' && i - zeros < MAX_ZEROS) i++;
  let code = 0;
  const digits = i;
  for (; i - digits < (x ? 6 : 7); i++) {
    const d = x ? hexAt(text, i, 1) : text.charCodeAt(i) - 0x30;
    if (d < 0 || d > (x ? 15 : 9)) break;
    code = code * (x ? 16 : 10) + d;
  }
  if (text[i] !== ';' || (i === digits && i === zeros)) return undefined;
  if (code > 0x10ffff || (code >= 0xd800 && code <= 0xdfff)) return undefined;
  return { char: String.fromCodePoint(code), length: i - at + 1 };
}

const ALPHANUMERIC = /^[A-Za-z0-9]$/;
/** Examples show an escaping where encoders use it: on what is not a letter or digit. */
const punct = (ch: string, s: string): string | undefined => (ALPHANUMERIC.test(ch) ? undefined : s);
const utf8 = (ch: string) => [...Buffer.from(ch, 'utf8')];
const unit = (code: number): Token | undefined =>
  code < 0 ? undefined : { char: String.fromCharCode(code), length: 0 };
const sized = (t: Token | undefined, length: number): Token | undefined => t && { char: t.char, length };

/**
 * The escapings a JSON, XML, HTML, URL or form encoder may write a character in (any character: a letter
 * as `\u0061` or `&#97;` too), either hex case, escaped twice where a stack does that. Tried in this order
 * at each introducer, the twice-escaped first. `+` for a space is not here: it is ambiguous with a literal
 * `+`, so a secret holding a space is searched with `+` in its place too (WHOLE_FORMS).
 */
export const ESCAPINGS = {
  jsonTwice: {
    by: 'a JSON document quoted inside a JSON string (an error detail): `\\\\/`, `\\\\\\/`, `\\\\u002f`',
    alphanumeric: String.raw`\\\\u00[3-7][0-9a-f]`,
    introducer: '\\',
    read: (t, at) => {
      if (t[at + 1] !== '\\') return undefined;
      if (t[at + 2] === '/') return { char: '/', length: 3 };
      if (t[at + 2] === '\\' && t[at + 3] === '/') return { char: '/', length: 4 };
      return t[at + 2] === 'u' ? sized(unit(hexAt(t, at + 3, 4)), 7) : undefined;
    },
    example: (ch) => (ch === '/' ? '\\\\/' : undefined),
  },
  jsonUnicode: {
    by: 'JSON encoders escaping to `\\uXXXX` (Go, PHP JSON_HEX_*, Python ensure_ascii)',
    alphanumeric: String.raw`\\u00[3-7][0-9a-f]`,
    introducer: '\\',
    read: (t, at) => (t[at + 1] === 'u' ? sized(unit(hexAt(t, at + 2, 4)), 6) : undefined),
    example: (ch, up) =>
      punct(ch, Array.from({ length: ch.length }, (_, i) => `\\u${hex(ch.charCodeAt(i), 4, up)}`).join('')),
  },
  jsonShort: {
    by: 'JSON encoders (`\\/` is PHP json_encode and Java escapers by default)',
    introducer: '\\',
    read: (t, at) => {
      const char = (JSON_SHORT as Record<string, string>)[t[at + 1]];
      return char === undefined ? undefined : { char, length: 2 };
    },
    example: (ch) => JSON_SHORT_OF[ch],
    frequent: [['\\/', '/']],
  },
  percentTwice: {
    by: 'a URL-encoded value encoded again (a link inside a query): `%252F`',
    alphanumeric: '%25[3-7][0-9a-f]',
    introducer: '%',
    read: (t, at) =>
      t[at + 1] === '2' && t[at + 2] === '5' ? sized(unit(hexAt(t, at + 3, 2)), 5) : undefined,
    example: (ch, up) =>
      punct(
        ch,
        utf8(ch)
          .map((b) => `%25${hex(b, 2, up)}`)
          .join(''),
      ),
  },
  percent: {
    by: 'URL and form encoders, `%XX` per UTF-8 byte, either case',
    alphanumeric: '%[3-7][0-9a-f]',
    introducer: '%',
    read: (t, at) => sized(unit(hexAt(t, at + 1, 2)), 3),
    example: (ch, up) =>
      punct(
        ch,
        utf8(ch)
          .map((b) => `%${hex(b, 2, up)}`)
          .join(''),
      ),
  },
  referenceTwice: {
    by: 'HTML escaped twice (`&amp;#47;`, a reference in an attribute escaped again)',
    alphanumeric: `&amp;${NUMERIC_ALPHANUMERIC}`,
    introducer: '&',
    read: (t, at) => {
      const r = t.startsWith('amp;', at + 1) ? readReference(t, at + 5) : undefined;
      return r && { char: r.char, length: r.length + 5 };
    },
  },
  reference: {
    by: 'HTML and XML encoders: `&#47;`, `&#x2F;` (leading zeros allowed), named references (`&sol;`)',
    alphanumeric: `&${NUMERIC_ALPHANUMERIC}`,
    introducer: '&',
    read: (t, at) => {
      const r = readReference(t, at + 1);
      return r && { char: r.char, length: r.length + 1 };
    },
    example: (ch, up) =>
      punct(ch, up ? `&#x${hex(ch.codePointAt(0)!, 1, true)};` : `&#${ch.codePointAt(0)};`),
  },
} as const satisfies Record<string, Escaping>;

export type EscapingName = keyof typeof ESCAPINGS;

const TABLE = Object.values(ESCAPINGS) as readonly Escaping[];
/** Any token standing for a letter or digit. */
const ALPHANUMERIC_TOKEN = new RegExp(TABLE.flatMap((e) => e.alphanumeric ?? []).join('|'), 'i');
const BY_INTRODUCER: Readonly<Record<string, readonly Escaping[]>> = {
  '\\': TABLE.filter((e) => e.introducer === '\\'),
  '%': TABLE.filter((e) => e.introducer === '%'),
  '&': TABLE.filter((e) => e.introducer === '&'),
};

/** The escape token at `at` (an introducer), or undefined. */
function tokenAt(text: string, at: number): Token | undefined {
  for (const e of BY_INTRODUCER[text[at]]) {
    const t = e.read(text, at);
    if (t) return t;
  }
  return undefined;
}

/** The offset of the next introducer at or after `from` (-1 when none): three native searches, kept. */
class Introducers {
  private readonly next = [-2, -2, -2];
  constructor(private readonly text: string) {}

  from(at: number): number {
    let min = -1;
    const chars = '\\%&';
    for (let k = 0; k < 3; k++) {
      let n = this.next[k];
      if (n !== -1 && n < at) n = this.next[k] = this.text.indexOf(chars[k], at);
      if (n !== -1 && (min === -1 || n < min)) min = n;
    }
    return min;
  }
}

/**
 * A text with its escape tokens decoded: only those standing for a character some form holds (`\"` or
 * `&lt;` cannot be part of a key's echo and stay as written, so most answers decode to themselves at the
 * cost of native searches for the three introducers). `from`, when asked for, gives each decoded
 * character's offset in the original, and at `length` the original's length, so a span maps back whole.
 */
function decode(
  text: string,
  alphabet: ReadonlySet<string>,
  offsets: boolean,
): { text: string; from?: Int32Array } {
  let parts: string[] | undefined;
  let from: number[] | undefined;
  let last = 0;
  const introducers = new Introducers(text);
  for (let at = introducers.from(0); at !== -1;) {
    const t = tokenAt(text, at);
    if (!t || t.length === 0 || !alphabet.has(t.char)) {
      at = introducers.from(at + 1);
      continue;
    }
    parts ??= [];
    parts.push(text.slice(last, at), t.char);
    if (offsets) {
      from ??= [];
      for (let i = last; i < at; i++) from.push(i);
      for (let i = 0; i < t.char.length; i++) from.push(at);
    }
    last = at + t.length;
    at = introducers.from(last);
  }
  if (!parts) return { text };
  parts.push(text.slice(last));
  if (!offsets) return { text: parts.join('') };
  for (let i = last; i <= text.length; i++) from!.push(i);
  return { text: parts.join(''), from: Int32Array.from(from!) };
}

/** The frequent tokens (ESCAPINGS) standing for a character of `alphabet`. */
function frequentTokens(alphabet: ReadonlySet<string>): (readonly [string, string])[] {
  return TABLE.flatMap((e) => e.frequent ?? []).filter(([, char]) => alphabet.has(char));
}

/** Whether the decoded text holds a form: frequent tokens replaced natively first, then the scan. */
function decodedIncludes(
  text: string,
  forms: readonly string[],
  alphabet: ReadonlySet<string>,
  frequent: readonly (readonly [string, string])[],
): boolean {
  let t = text;
  for (const [token, char] of frequent) if (t.includes(token)) t = t.split(token).join(char);
  const d = decode(t, alphabet, false).text;
  return d !== text && includesAny(d, forms);
}

/**
 * Whether any form occurs: one native substring search per form, measured several times faster than one
 * pass of an alternation of them all (V8 scans an alternation of literals position by position).
 */
function includesAny(text: string, forms: readonly string[]): boolean {
  for (let i = 0; i < forms.length; i++) if (text.includes(forms[i])) return true;
  return false;
}

/** The longest run of ASCII letters and digits of a form ('' when it has none: every text is decoded). */
function anchorOf(form: string): string {
  let best = '';
  for (const run of form.split(/[^A-Za-z0-9]+/)) if (run.length > best.length) best = run;
  return best;
}

/** Whole-string forms a secret is echoed in before any escaping: itself, and base64 (a Basic header). */
const WHOLE_FORMS = {
  itself: (secret: string) => [secret],
  /** application/x-www-form-urlencoded writes a space as `+`. */
  formSpace: (secret: string) => (secret.includes(' ') ? [secret.replace(/ /g, '+')] : []),
  base64: (secret: string) => {
    const bytes = Buffer.from(secret, 'utf8');
    return [bytes.toString('base64'), bytes.toString('base64url'), ...base64Cores(bytes)];
  },
} as const satisfies Record<string, (secret: string) => readonly string[]>;

/**
 * The base64 characters fully determined by the secret's own bytes when it sits at byte offset 0, 1 or 2
 * (mod 3) of a larger encoded blob (`base64("user:" + password)`): characters that mix in bits of
 * neighbouring bytes are cut off.
 */
function base64Cores(bytes: Buffer): string[] {
  const out: string[] = [];
  for (const alphabet of ['base64', 'base64url'] as const)
    for (let offset = 0; offset < 3; offset++) {
      const padded = Buffer.concat([Buffer.alloc(offset), bytes]);
      const encoded = padded.toString(alphabet);
      const drop = offset === 0 ? 0 : offset + 1;
      const keep = Math.floor((padded.length * 8) / 6);
      out.push(encoded.slice(drop, keep));
    }
  return out;
}

/** The plain strings searched for, as written and decoded: the secret and its whole forms, long enough. */
function wholeForms(secret: string): string[] {
  const all = Object.values(WHOLE_FORMS).flatMap((f) => f(secret));
  return [...new Set(all)].filter((f) => f.length >= MIN_FORM_LENGTH).sort((a, b) => b.length - a.length);
}

/** One secret, ready for a matcher: its whole forms and the longest span an escaped echo of one takes. */
export interface SecretPattern {
  readonly forms: readonly string[];
  /** Bytes of the longest escaped spelling of any form. */
  readonly maxBytes: number;
}

/** The whole forms of a secret (computed once per secret). */
export function secretPattern(secret: string): SecretPattern | undefined {
  const forms = secret ? wholeForms(secret) : [];
  if (forms.length === 0) return undefined;
  return { forms, maxBytes: forms[0].length * LONGEST_SPELLING };
}

/**
 * The secret written out in each escaping throughout (canonical hex, either case), and its whole forms:
 * examples for journals that search plain text (the test run's log scan), not what the matcher is made of.
 */
export function secretForms(secret: string): string[] {
  const out: string[] = [];
  for (const whole of secret ? wholeForms(secret) : []) {
    out.push(whole);
    const chars = [...whole];
    for (const e of TABLE) {
      const example = e.example;
      if (!example) continue;
      for (const upper of [true, false]) out.push(chars.map((c) => example(c, upper) ?? c).join(''));
    }
  }
  return [...new Set(out)].sort((a, b) => b.length - a.length);
}

const MASK = '[REDACTED]';

interface Span {
  start: number;
  end: number;
}

/** Sorted, merged spans: overlapping echoes (a form inside another) become one replacement. */
function merge(spans: Span[]): Span[] {
  spans.sort((a, b) => a.start - b.start || b.end - a.end);
  const out: Span[] = [];
  for (const s of spans) {
    const last = out[out.length - 1];
    if (last && s.start < last.end) last.end = Math.max(last.end, s.end);
    else out.push({ ...s });
  }
  return out;
}

/** Every occurrence of `pattern` (global) in `text`, mapped through `from` when the text was decoded. */
function spansOf(pattern: RegExp, text: string, from?: Int32Array): Span[] {
  const spans: Span[] = [];
  pattern.lastIndex = 0;
  for (let m = pattern.exec(text); m; m = pattern.exec(text)) {
    const end = m.index + m[0].length;
    spans.push(from ? { start: from[m.index], end: from[end] } : { start: m.index, end });
  }
  return spans;
}

const NEVER = /(?!)/;

/** One alternation of all forms, longest first (for the spans of a text known to hold one). */
function alternation(forms: readonly string[]): RegExp {
  return forms.length === 0 ? NEVER : new RegExp(forms.map(escapeRegExp).join('|'), 'g');
}

/**
 * The forms of a set of secrets, ready to search bytes and text in every escaping. Built once per set by
 * its user (the key-echo stage keeps the one of its credential's current list, the redactor its own).
 *
 * A text is searched as written (one pass of one alternation of every plain form; bytes as latin1, so each
 * byte is one character) and, when it holds an escape at all, once more decoded: every escape token of
 * ESCAPINGS replaced by its character in one pass, so any mix of escapings within one echo is found. Spans
 * found in the decoded text map back to the bytes that spelled them.
 */
export class SecretMatcher {
  /** Every plain form, longest first. */
  readonly forms: readonly string[];
  /** Length in bytes of the longest possible match (0 when there is none). */
  readonly maxBytes: number;
  private readonly byteForms: readonly string[];
  /** Every character of every form: an escape standing for anything else is left as written. */
  private readonly alphabet: ReadonlySet<string>;
  private readonly frequent: readonly (readonly [string, string])[];
  /** The longest run of letters and digits of each form (ASCII: the same as text and as bytes). */
  private readonly anchors: readonly string[];
  private readonly textAll: RegExp;
  private readonly byteAll: RegExp;

  constructor(
    secrets: Iterable<string>,
    patternOf: (secret: string) => SecretPattern | undefined = secretPattern,
  ) {
    const all = new Set<string>();
    let maxBytes = 0;
    for (const s of secrets) {
      const p = patternOf(s);
      if (!p) continue;
      for (const f of p.forms) all.add(f);
      maxBytes = Math.max(maxBytes, p.maxBytes);
    }
    this.forms = [...all].sort((a, b) => b.length - a.length);
    this.maxBytes = maxBytes;
    this.byteForms = this.forms.map((f) => Buffer.from(f, 'utf8').toString('latin1'));
    this.alphabet = new Set([...this.forms.join(''), ...this.byteForms.join('')]);
    this.frequent = frequentTokens(this.alphabet);
    this.anchors = [...new Set(this.forms.map(anchorOf))];
    this.textAll = alternation(this.forms);
    this.byteAll = alternation(this.byteForms);
  }

  get empty(): boolean {
    return this.forms.length === 0;
  }

  /**
   * As written, then decoded. Decoding is for a text that may hold an escaped echo: one with an anchor (the
   * longest run of letters and digits of a form, which stays as written unless a letter or digit itself is
   * escaped) or with a token standing for a letter or digit. Most answers hold neither, and cost native
   * substring searches and one scan for the introducers.
   */
  private found(text: string, forms: readonly string[], anchors: readonly string[]): boolean {
    if (includesAny(text, forms)) return true;
    if (!includesAny(text, anchors) && !ALPHANUMERIC_TOKEN.test(text)) return false;
    return decodedIncludes(text, forms, this.alphabet, this.frequent);
  }

  /** Whether any form occurs in the bytes, in any escaping (read through a transient latin1 string). */
  inBuffer(body: Buffer): boolean {
    return (
      this.forms.length > 0 &&
      body.length > 0 &&
      this.found(body.toString('latin1'), this.byteForms, this.anchors)
    );
  }

  inText(text: string): boolean {
    return this.forms.length > 0 && this.found(text, this.forms, this.anchors);
  }

  /** Spans of every echo: as written, and in the decoded text mapped back. */
  private spans(text: string, all: RegExp): Span[] {
    const spans = spansOf(all, text);
    const d = decode(text, this.alphabet, true);
    if (d.from) spans.push(...spansOf(all, d.text, d.from));
    return merge(spans);
  }

  /**
   * Replaces every occurrence of every form. Returns the same Buffer when nothing matched. With `sameLength`
   * each matched byte becomes `*`, so a declared Content-Length stays true (streamed answers).
   */
  scrubBuffer(body: Buffer, sameLength = false): { body: Buffer; count: number } {
    if (!this.inBuffer(body)) return { body, count: 0 };
    const merged = this.spans(body.toString('latin1'), this.byteAll);
    if (sameLength) {
      const out = Buffer.from(body);
      for (const s of merged) out.fill(0x2a /* * */, s.start, s.end);
      return { body: out, count: merged.length };
    }
    const mask = Buffer.from(MASK);
    const parts: Buffer[] = [];
    let last = 0;
    for (const s of merged) {
      parts.push(body.subarray(last, s.start), mask);
      last = s.end;
    }
    parts.push(body.subarray(last));
    return { body: Buffer.concat(parts), count: merged.length };
  }

  /** Replaces every occurrence of every form with `[REDACTED]`; the same string when nothing matched. */
  scrubText(text: string): { text: string; count: number } {
    if (!this.inText(text)) return { text, count: 0 };
    const merged = this.spans(text, this.textAll);
    let out = '';
    let last = 0;
    for (const s of merged) {
      out += text.slice(last, s.start) + MASK;
      last = s.end;
    }
    return { text: out + text.slice(last), count: merged.length };
  }
}
