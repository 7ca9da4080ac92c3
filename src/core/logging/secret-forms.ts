/**
 * The forms a secret takes when a vendor echoes it (architecture §13 "Scrub every form, everywhere"): the
 * literal bytes, URL-encoded the ways common HTTP stacks write it, JSON-escaped the ways common JSON
 * encoders write it, and base64. A scrubber that knows only the literal bytes misses `ab%2Fcd` in a
 * download link, `ab\/cd` in a PHP answer and `YWIvY2Q` in an echoed Basic header.
 *
 * Forms are computed once per secret (at registration and when a session is renewed), never per request.
 */

/** Shorter forms are not searched for: they would mangle ordinary text, and no real key is that short. */
export const MIN_FORM_LENGTH = 6;

const UPPER_HEX = /%[0-9A-F]{2}/g;

function lowerHex(s: string): string {
  return s.replace(UPPER_HEX, (m) => m.toLowerCase());
}

/** Percent-encodes every UTF-8 byte of `s` whose character `keep` does not accept (upper-case hex). */
function percentEncode(s: string, keep: RegExp): string {
  let out = '';
  for (const ch of s) {
    if (keep.test(ch)) out += ch;
    else for (const b of Buffer.from(ch, 'utf8')) out += '%' + b.toString(16).toUpperCase().padStart(2, '0');
  }
  return out;
}

const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
const UNRESERVED_OR_SLASH = /^[A-Za-z0-9\-._~/]$/;
const FORM_SAFE = /^[A-Za-z0-9*\-._ ]$/;

/** `application/x-www-form-urlencoded` as browsers and URLSearchParams write it: space → `+`. */
function formEncode(s: string): string {
  return percentEncode(s, FORM_SAFE).replace(/ /g, '+');
}

/** Every character that is not a letter or digit as `\uXXXX` (some encoders' "hex" options). */
function jsonHexEscape(s: string, upper: boolean): string {
  let out = '';
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if ((c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) out += s[i];
    else {
      const hex = c.toString(16).padStart(4, '0');
      out += '\\u' + (upper ? hex.toUpperCase() : hex);
    }
  }
  return out;
}

function xmlEscape(s: string): string {
  return s
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;')
    .replace(/'/g, '&#39;');
}

/**
 * The base64 characters fully determined by the secret's own bytes when it sits at byte offset 0, 1 or 2
 * (mod 3) of a larger encoded blob (`base64("user:" + password)`): characters that mix in bits of
 * neighbouring bytes are cut off.
 */
function base64Cores(bytes: Buffer, url: boolean): string[] {
  const out: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const padded = Buffer.concat([Buffer.alloc(offset), bytes]);
    const encoded = padded.toString(url ? 'base64url' : 'base64');
    const drop = offset === 0 ? 0 : offset + 1;
    const keep = Math.floor((padded.length * 8) / 6);
    out.push(encoded.slice(drop, keep));
  }
  return out;
}

/**
 * Every form of `secret` worth searching for, deduplicated, longest first (so that a form containing
 * another is replaced whole), forms shorter than MIN_FORM_LENGTH left out.
 */
export function secretForms(secret: string): string[] {
  if (!secret) return [];
  const bytes = Buffer.from(secret, 'utf8');
  const uri = encodeURIComponent(secret);
  const json = JSON.stringify(secret).slice(1, -1);
  const candidates = [
    secret,
    // URL-encoded: encodeURIComponent, RFC 3986 strict (PHP rawurlencode), path-safe (Python quote keeps
    // `/`), form-encoded (space → `+`, PHP urlencode, URLSearchParams), and twice-encoded; hex either case.
    uri,
    lowerHex(uri),
    percentEncode(secret, UNRESERVED),
    lowerHex(percentEncode(secret, UNRESERVED)),
    percentEncode(secret, UNRESERVED_OR_SLASH),
    lowerHex(percentEncode(secret, UNRESERVED_OR_SLASH)),
    formEncode(secret),
    lowerHex(formEncode(secret)),
    encodeURIComponent(uri),
    encodeURIComponent(lowerHex(uri)),
    // JSON-escaped: standard, `\/` (PHP's default), every non-alphanumeric as \uXXXX either case.
    json,
    json.replace(/\//g, '\\/'),
    jsonHexEscape(secret, false),
    jsonHexEscape(secret, true),
    // In XML and HTML text.
    xmlEscape(secret),
    // base64 and base64url: whole (padded), and inside a larger encoded value.
    bytes.toString('base64'),
    bytes.toString('base64url'),
    ...base64Cores(bytes, false),
    ...base64Cores(bytes, true),
  ];
  const unique = [...new Set(candidates)].filter((f) => f.length >= MIN_FORM_LENGTH);
  return unique.sort((a, b) => b.length - a.length);
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

const matchers = new WeakMap<readonly string[], SecretMatcher>();

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');
}

/** One alternation of all forms, longest first; never matches when there is none. */
function alternation(forms: readonly string[]): RegExp {
  return forms.length === 0 ? /(?!)/ : new RegExp(forms.map(escapeRegExp).join('|'));
}

/**
 * The forms of a set of secrets, ready to search bytes and text. Built once per set: `SecretMatcher.for`
 * keeps one per list instance, so a credential that hands out the same list until its session changes
 * costs one WeakMap lookup per answer.
 *
 * Finding out whether anything matches is one pass of one regular expression (an alternation of every
 * form; bytes are searched as latin1 text, so each byte is one character): measured 5–10 times faster than
 * one byte search per form. Only a text that does match is searched form by form for the exact spans.
 */
export class SecretMatcher {
  /** Every form, longest first. */
  readonly forms: readonly string[];
  /** Length in bytes of the longest form (0 when there is none). */
  readonly maxBytes: number;
  private readonly buffers: readonly Buffer[];
  private readonly textPattern: RegExp;
  private readonly bytePattern: RegExp;

  constructor(secrets: Iterable<string>, formsOf: (secret: string) => readonly string[] = secretForms) {
    const all = new Set<string>();
    for (const s of secrets) for (const f of formsOf(s)) all.add(f);
    this.forms = [...all].sort((a, b) => b.length - a.length);
    this.buffers = this.forms.map((f) => Buffer.from(f, 'utf8'));
    this.maxBytes = this.buffers.reduce((m, b) => Math.max(m, b.length), 0);
    this.textPattern = alternation(this.forms);
    this.bytePattern = alternation(this.buffers.map((b) => b.toString('latin1')));
  }

  /** The matcher of a list of secrets, built on the first call for that list instance. */
  static for(secrets: readonly string[]): SecretMatcher {
    let m = matchers.get(secrets);
    if (!m) {
      m = new SecretMatcher(secrets);
      matchers.set(secrets, m);
    }
    return m;
  }

  get empty(): boolean {
    return this.forms.length === 0;
  }

  /** Whether any form occurs in the bytes (read through a transient latin1 string; no decoding). */
  inBuffer(body: Buffer): boolean {
    return this.forms.length > 0 && body.length > 0 && this.bytePattern.test(body.toString('latin1'));
  }

  inText(text: string): boolean {
    return this.forms.length > 0 && this.textPattern.test(text);
  }

  /**
   * Replaces every occurrence of every form. Returns the same Buffer when nothing matched. With `sameLength`
   * each matched byte becomes `*`, so a declared Content-Length stays true (streamed answers).
   */
  scrubBuffer(body: Buffer, sameLength = false): { body: Buffer; count: number } {
    if (!this.inBuffer(body)) return { body, count: 0 };
    const spans: Span[] = [];
    for (const b of this.buffers)
      for (let i = body.indexOf(b); i !== -1; i = body.indexOf(b, i + 1))
        spans.push({ start: i, end: i + b.length });
    const merged = merge(spans);
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
    const spans: Span[] = [];
    for (const f of this.forms)
      for (let i = text.indexOf(f); i !== -1; i = text.indexOf(f, i + 1))
        spans.push({ start: i, end: i + f.length });
    const merged = merge(spans);
    let out = '';
    let last = 0;
    for (const s of merged) {
      out += text.slice(last, s.start) + MASK;
      last = s.end;
    }
    return { text: out + text.slice(last), count: merged.length };
  }
}
