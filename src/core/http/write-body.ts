import { GatewayError } from '../errors/gateway-error.js';
import { lenientPercentDecode, type ParamNameTest } from './param-name.js';

/**
 * Write bodies the gateway forwards (form-urlencoded or JSON), read the way a vendor will read them so that
 * parameters can be removed (consumer credentials) while every other byte stays as sent.
 */
export type WriteBodyKind = 'json' | 'form';

const FORM_TYPE = 'application/x-www-form-urlencoded';
const JSON_TYPE = /^(?:application|text)\/(?:[\w.+-]*\+)?json$/;
const CHARSET = /;\s*charset\s*=\s*"?([\w.:-]{1,40})"?\s*(?:;|$)/i;

function mediaTypeOf(contentType: string | undefined): string {
  if (!contentType) return '';
  const semi = contentType.indexOf(';');
  return (semi === -1 ? contentType : contentType.slice(0, semi)).trim().toLowerCase();
}

/** How a body of this content type is read, or undefined for a type the gateway does not read. */
export function writeBodyKind(contentType: string | undefined): WriteBodyKind | undefined {
  const type = mediaTypeOf(contentType);
  if (type === FORM_TYPE) return 'form';
  return JSON_TYPE.test(type) ? 'json' : undefined;
}

function firstNonSpace(body: Buffer): number {
  for (let i = 0; i < body.length; i++) {
    const c = body[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) return c;
  }
  return -1;
}

/**
 * Checks a write body before any upstream call and returns the content type to forward: the media type
 * the body was read as (and its charset), so the vendor reads it as the gateway did. A body the gateway
 * cannot read is a body it cannot strip credentials from, so it is refused: another type is a 415, JSON
 * that does not parse (a lenient parser might still find a key in it) or a form that is really JSON (a
 * vendor reading its raw body as JSON would) a 400.
 */
export function checkWriteBody(contentType: string | undefined, body: Buffer): string {
  const type = mediaTypeOf(contentType);
  const kind = writeBodyKind(type);
  if (!kind)
    throw new GatewayError('UNSUPPORTED_FORMAT', {
      parameter: 'Content-Type',
      message: `A request body must be ${FORM_TYPE} or application/json.`,
    });
  if (kind === 'json') {
    try {
      JSON.parse(body.toString('utf8'));
    } catch {
      throw new GatewayError('VALIDATION_FAILED', {
        parameter: 'body',
        message: 'The request body is not valid JSON (UTF-8).',
      });
    }
  } else {
    const c = firstNonSpace(body);
    if (c === 0x7b /* { */ || c === 0x5b /* [ */)
      throw new GatewayError('VALIDATION_FAILED', {
        parameter: 'body',
        message: `The request body is JSON: send it as application/json, not ${FORM_TYPE}.`,
      });
  }
  const charset = CHARSET.exec(contentType ?? '')?.[1];
  return charset ? `${type}; charset=${charset}` : type;
}

const AMP = 0x26;
const SEMI = 0x3b;
const EQ = 0x3d;

/** A pair's name as a lenient server decodes it: `+` a space, each `%XX` a byte (`token%00%FF` is `token`). */
function nameOf(segment: Buffer): string {
  const eq = segment.indexOf(EQ);
  const raw = segment.toString('utf8', 0, eq === -1 ? segment.length : eq);
  return lenientPercentDecode(raw.indexOf('+') === -1 ? raw : raw.replace(/\+/g, ' '));
}

/**
 * A form body without the pairs whose name `drop` matches; the same Buffer when there are none. The other
 * pairs keep their bytes and order. Some servers (Python before 3.9.2, Perl CGI, PHP configured so) also
 * split on `;`: a pair that hides a dropped name behind a `;` has its `;` escaped as `%3B`, which reads the
 * same to a server that splits on `&` only.
 */
export function removeFormParams(body: Buffer, drop: ParamNameTest): Buffer {
  const out: Buffer[] = [];
  let changed = false;
  let start = 0;
  for (;;) {
    let end = body.indexOf(AMP, start);
    if (end === -1) end = body.length;
    let pair = body.subarray(start, end);
    let keep = true;
    if (pair.length > 0) {
      if (drop(nameOf(pair))) keep = false;
      else if (pair.indexOf(SEMI) !== -1 && hidesName(pair, drop)) {
        pair = Buffer.from(pair.toString('latin1').replace(/;/g, '%3B'), 'latin1');
        changed = true;
      }
    }
    if (keep) out.push(pair);
    else changed = true;
    if (end === body.length) break;
    start = end + 1;
  }
  if (!changed) return body;
  const parts: Buffer[] = [];
  for (const [i, p] of out.entries()) {
    if (i > 0) parts.push(Buffer.of(AMP));
    parts.push(p);
  }
  return Buffer.concat(parts);
}

function hidesName(pair: Buffer, drop: ParamNameTest): boolean {
  let start = pair.indexOf(SEMI) + 1;
  for (;;) {
    let end = pair.indexOf(SEMI, start);
    if (end === -1) end = pair.length;
    if (end > start && drop(nameOf(pair.subarray(start, end)))) return true;
    if (end === pair.length) return false;
    start = end + 1;
  }
}

// ---- JSON: the members of the top-level object, found by a byte scanner (the body was checked to parse).

const QUOTE = 0x22;
const BACKSLASH = 0x5c;

function skipSpace(b: Buffer, i: number): number {
  while (i < b.length) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x09 && c !== 0x0a && c !== 0x0d) break;
    i++;
  }
  return i;
}

/** `b[i]` is the opening quote; returns the index after the closing one. */
function skipString(b: Buffer, i: number): number {
  for (i++; i < b.length; i++) {
    const c = b[i];
    if (c === BACKSLASH) i++;
    else if (c === QUOTE) return i + 1;
  }
  return -1;
}

function skipValue(b: Buffer, i: number): number {
  const c = b[i];
  if (c === QUOTE) return skipString(b, i);
  if (c === 0x7b || c === 0x5b) {
    let depth = 0;
    while (i < b.length) {
      const d = b[i];
      if (d === QUOTE) {
        i = skipString(b, i);
        if (i === -1) return -1;
        continue;
      }
      if (d === 0x7b || d === 0x5b) depth++;
      else if (d === 0x7d || d === 0x5d) {
        depth--;
        if (depth === 0) return i + 1;
      }
      i++;
    }
    return -1;
  }
  // Number, true, false, null.
  while (i < b.length) {
    const d = b[i];
    if (d === 0x2c || d === 0x7d || d === 0x5d || d === 0x20 || d === 0x09 || d === 0x0a || d === 0x0d) break;
    i++;
  }
  return i;
}

interface Member {
  start: number;
  end: number;
  drop: boolean;
}

function unreadable(): GatewayError {
  return new GatewayError('VALIDATION_FAILED', {
    parameter: 'body',
    message: 'The request body is not valid JSON.',
  });
}

/**
 * A JSON body without the members of its top-level object whose name `drop` matches; the same Buffer when
 * there are none. Everything else, whitespace included, keeps its bytes. Only the top level: that is where
 * a vendor reads its request parameters from a JSON body. Nested objects are values (a filter's details,
 * an EMIS client's serialised `data` entity whose `_type`s must stay intact) and are never rewritten.
 * A top-level array or scalar has no parameters and is returned as is.
 */
export function removeJsonMembers(body: Buffer, drop: ParamNameTest): Buffer {
  let i = skipSpace(body, 0);
  if (body[i] !== 0x7b) return body;
  const members: Member[] = [];
  i = skipSpace(body, i + 1);
  if (body[i] !== 0x7d)
    for (;;) {
      if (body[i] !== QUOTE) throw unreadable();
      const start = i;
      const keyEnd = skipString(body, i);
      if (keyEnd === -1) throw unreadable();
      let key: unknown;
      try {
        key = JSON.parse(body.toString('utf8', start, keyEnd));
      } catch {
        throw unreadable();
      }
      i = skipSpace(body, keyEnd);
      if (body[i] !== 0x3a /* : */) throw unreadable();
      i = skipSpace(body, i + 1);
      const end = skipValue(body, i);
      if (end === -1 || end === i) throw unreadable();
      members.push({ start, end, drop: drop(String(key)) });
      i = skipSpace(body, end);
      if (body[i] === 0x2c) {
        i = skipSpace(body, i + 1);
        continue;
      }
      if (body[i] === 0x7d) break;
      throw unreadable();
    }
  if (!members.some((m) => m.drop)) return body;
  // Each kept member keeps the separator that preceded it (`,` and whitespace), except the first kept one.
  const parts: Buffer[] = [body.subarray(0, members[0].start)];
  let first = true;
  for (const [n, m] of members.entries()) {
    if (m.drop) continue;
    if (!first) parts.push(body.subarray(members[n - 1].end, m.start));
    parts.push(body.subarray(m.start, m.end));
    first = false;
  }
  parts.push(body.subarray(members[members.length - 1].end));
  return Buffer.concat(parts);
}
