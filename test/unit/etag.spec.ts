import { etagOf } from '../../src/core/http/etag.js';

describe('ETag (src/core/http/etag.ts)', () => {
  // A view's ETag is made from text and a proxied answer's from bytes: the same content gives the same one.
  it.each([true, false])('a text and its bytes give the same ETag (complete: %s)', (complete) => {
    const text = '{"a":{"v":"é ✓"},"b":[1,2,3]}';
    expect(etagOf(text, complete)).toBe(etagOf(Buffer.from(text, 'utf8'), complete));
  });

  it('covers completeness and the content, and is 32 base64url characters in quotes', () => {
    const text = '{"a":1}';
    expect(etagOf(text, true)).not.toBe(etagOf(text, false));
    expect(etagOf(text)).not.toBe(etagOf('{"a":2}'));
    expect(etagOf(text)).toMatch(/^"[A-Za-z0-9_-]{32}"$/);
  });
});
