/**
 * Whether `b[start..end)` is exactly one JSON text, as `JSON.parse` would accept it after UTF-8 decoding,
 * checked on the bytes without decoding or building anything. Every cacheable answer is checked (only valid
 * answers are stored); `JSON.parse` of a 2 KB answer cost a miss about 16 µs and its garbage, this a fraction.
 *
 * Outside strings JSON is ASCII; inside, any byte from 0x20 up passes (a malformed UTF-8 sequence decodes
 * to U+FFFD, which `JSON.parse` accepts too), controls below 0x20 do not, and escapes are checked.
 */
export function isJsonText(b: Uint8Array, start = 0, end = b.length): boolean {
  const stack = containers;
  stack.length = 0;
  let i = ws(b, start, end);
  for (;;) {
    // A value starts at i.
    if (i >= end) return false;
    let c = b[i];
    if (c === OPEN_OBJECT) {
      i = ws(b, i + 1, end);
      if (i < end && b[i] === CLOSE_OBJECT) i++;
      else {
        if (stack.length >= MAX_DEPTH) return parses(b, start, end);
        stack.push(OBJECT);
        i = member(b, i, end);
        if (i < 0) return false;
        continue;
      }
    } else if (c === OPEN_ARRAY) {
      i = ws(b, i + 1, end);
      if (i < end && b[i] === CLOSE_ARRAY) i++;
      else {
        if (stack.length >= MAX_DEPTH) return parses(b, start, end);
        stack.push(ARRAY);
        continue;
      }
    } else if (c === QUOTE) i = string(b, i, end);
    else if (c === MINUS || (c >= DIGIT_0 && c <= DIGIT_9)) i = number(b, i, end);
    else if (c === 0x74 /* t */) i = literal(b, i, end, TRUE);
    else if (c === 0x66 /* f */) i = literal(b, i, end, FALSE);
    else if (c === 0x6e /* n */) i = literal(b, i, end, NULL);
    else return false;
    if (i < 0) return false;
    // A value ended: a comma for the next one, or the containers it closes.
    for (;;) {
      i = ws(b, i, end);
      const depth = stack.length;
      if (depth === 0) return i === end;
      if (i >= end) return false;
      c = b[i];
      const top = stack[depth - 1];
      if (c === COMMA) {
        i = ws(b, i + 1, end);
        if (top === OBJECT) {
          i = member(b, i, end);
          if (i < 0) return false;
        }
        break;
      }
      if (c !== (top === OBJECT ? CLOSE_OBJECT : CLOSE_ARRAY)) return false;
      stack.pop();
      i++;
    }
  }
}

const OBJECT = 1;
const ARRAY = 2;
/** Deeper nesting is left to JSON.parse (V8's is iterative): the stack stays small for every real answer. */
const MAX_DEPTH = 4096;
/** Reused: the check is synchronous and never re-entered. */
const containers: number[] = [];

const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
const TRUE = [0x74, 0x72, 0x75, 0x65];
const FALSE = [0x66, 0x61, 0x6c, 0x73, 0x65];
const NULL = [0x6e, 0x75, 0x6c, 0x6c];

function parses(b: Uint8Array, start: number, end: number): boolean {
  try {
    JSON.parse(Buffer.from(b.buffer, b.byteOffset + start, end - start).toString('utf8'));
    return true;
  } catch {
    return false;
  }
}

function ws(b: Uint8Array, i: number, end: number): number {
  while (i < end) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) break;
    i++;
  }
  return i;
}

/** A member's key and colon, at i (after whitespace); returns where its value starts, or -1. */
function member(b: Uint8Array, i: number, end: number): number {
  if (i >= end || b[i] !== QUOTE) return -1;
  i = string(b, i, end);
  if (i < 0) return -1;
  i = ws(b, i, end);
  if (i >= end || b[i] !== COLON) return -1;
  return ws(b, i + 1, end);
}

function isHex(c: number): boolean {
  return (c >= DIGIT_0 && c <= DIGIT_9) || (c >= 0x61 && c <= 0x66) || (c >= 0x41 && c <= 0x46);
}

/** A string at i (its opening quote); returns the index after its closing quote, or -1. */
function string(b: Uint8Array, i: number, end: number): number {
  i++;
  while (i < end) {
    const c = b[i];
    if (c === QUOTE) return i + 1;
    if (c < 0x20) return -1;
    if (c === BACKSLASH) {
      if (i + 1 >= end) return -1;
      const e = b[i + 1];
      if (e === 0x75 /* u */) {
        if (i + 5 >= end) return -1;
        if (!isHex(b[i + 2]) || !isHex(b[i + 3]) || !isHex(b[i + 4]) || !isHex(b[i + 5])) return -1;
        i += 6;
        continue;
      }
      // " \ / b f n r t
      if (
        e !== QUOTE &&
        e !== BACKSLASH &&
        e !== 0x2f &&
        e !== 0x62 &&
        e !== 0x66 &&
        e !== 0x6e &&
        e !== 0x72 &&
        e !== 0x74
      )
        return -1;
      i += 2;
      continue;
    }
    i++;
  }
  return -1;
}

function digits(b: Uint8Array, i: number, end: number): number {
  while (i < end && b[i] >= DIGIT_0 && b[i] <= DIGIT_9) i++;
  return i;
}

/** `-?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?` at i; returns the index after it, or -1. */
function number(b: Uint8Array, i: number, end: number): number {
  if (b[i] === MINUS) i++;
  if (i >= end) return -1;
  if (b[i] === DIGIT_0) i++;
  else {
    const from = i;
    i = digits(b, i, end);
    if (i === from) return -1;
  }
  if (i < end && b[i] === DOT) {
    const from = ++i;
    i = digits(b, i, end);
    if (i === from) return -1;
  }
  if (i < end && (b[i] === 0x65 || b[i] === 0x45)) {
    i++;
    if (i < end && (b[i] === PLUS || b[i] === MINUS)) i++;
    const from = i;
    i = digits(b, i, end);
    if (i === from) return -1;
  }
  return i;
}

function literal(b: Uint8Array, i: number, end: number, word: readonly number[]): number {
  if (i + word.length > end) return -1;
  for (let k = 0; k < word.length; k++) if (b[i + k] !== word[k]) return -1;
  return i + word.length;
}
