import fc from 'fast-check';
import { isJsonText } from '../../src/core/http/json-syntax.js';

/** What the check must agree with: JSON.parse of the UTF-8 decoding. */
function parses(b: Buffer): boolean {
  try {
    JSON.parse(b.toString('utf8'));
    return true;
  } catch {
    return false;
  }
}

const check = (b: Buffer): boolean => isJsonText(b, 0, b.length);

describe('isJsonText (JSON grammar on bytes, as JSON.parse accepts it)', () => {
  it.each([
    ['{}', true],
    ['[]', true],
    [' {"a": [1, -2.5e+3, 0, true, false, null, "x\\u00e9\\n"]} ', true],
    ['"s"', true],
    ['-0', true],
    ['1E5', true],
    ['{"a":1,}', false],
    ['[1,]', false],
    ['[1 2]', false],
    ['{"a" 1}', false],
    ['{1:2}', false],
    ['01', false],
    ['1.', false],
    ['.5', false],
    ['-', false],
    ['1e', false],
    ['+1', false],
    ['"\\x"', false],
    ['"\\u12g4"', false],
    ['"tab\there"', false],
    ['tru', false],
    ['nulll', false],
    ['{"a":1}}', false],
    ['[[[]]', false],
    ['', false],
    ['  ', false],
    ['{"a":1}{"b":2}', false],
    ['<html></html>', false],
  ])('%j → %s', (s, ok) => {
    expect(check(Buffer.from(s))).toBe(ok);
    expect(parses(Buffer.from(s))).toBe(ok);
  });

  it('checks a range inside a larger buffer', () => {
    const b = Buffer.from('xx[1,2]yy');
    expect(isJsonText(b, 2, 7)).toBe(true);
    expect(isJsonText(b, 2, 8)).toBe(false);
  });

  it('accepts bytes that are not UTF-8 inside strings, as JSON.parse does after decoding', () => {
    const b = Buffer.concat([Buffer.from('["a'), Buffer.from([0xc3, 0xff, 0x80]), Buffer.from('"]')]);
    expect(check(b)).toBe(true);
    expect(parses(b)).toBe(true);
    const truncated = Buffer.concat([Buffer.from('["a'), Buffer.from([0xc3]), Buffer.from('"]')]);
    expect(check(truncated)).toBe(parses(truncated));
  });

  it('nesting deeper than its own stack is left to JSON.parse', () => {
    expect(check(Buffer.from('['.repeat(10000) + ']'.repeat(10000)))).toBe(true);
    expect(check(Buffer.from('['.repeat(10000) + ']'.repeat(9999)))).toBe(false);
    expect(check(Buffer.from('{"a":'.repeat(5000) + '1' + '}'.repeat(5000)))).toBe(true);
  });

  it('agrees with JSON.parse on every JSON value', () => {
    fc.assert(
      fc.property(fc.json(), (text) => check(Buffer.from(text)) === true),
      { numRuns: 2000 },
    );
  });

  it('agrees with JSON.parse on JSON with one character changed, dropped or added', () => {
    const alphabet = fc.constantFrom(...'{}[]",:.-+eE0123456789 \t\n\\/ubfnrtaxl\u0001\u00e9'.split(''));
    fc.assert(
      fc.property(fc.json(), fc.nat(), fc.integer({ min: 0, max: 2 }), alphabet, (text, at, op, ch) => {
        const k = text.length === 0 ? 0 : at % text.length;
        const mutated =
          op === 0
            ? text.slice(0, k) + ch + text.slice(k + 1)
            : op === 1
              ? text.slice(0, k) + text.slice(k + 1)
              : text.slice(0, k) + ch + text.slice(k);
        const b = Buffer.from(mutated);
        return check(b) === parses(b);
      }),
      { numRuns: 20000 },
    );
  });

  it('agrees with JSON.parse on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 40 }), (bytes) => {
        const b = Buffer.from(bytes);
        return check(b) === parses(b);
      }),
      { numRuns: 5000 },
    );
  });
});
