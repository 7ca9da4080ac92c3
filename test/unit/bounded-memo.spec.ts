import { memoised } from '../../src/core/memo/bounded-memo.js';

describe('memoised', () => {
  it('makes a value once per key and keeps at most max, the oldest out first', () => {
    const memo = new Map<string, number>();
    let made = 0;
    const get = (k: string) => memoised(memo, k, 2, () => ++made);
    expect([get('a'), get('a'), get('b')]).toEqual([1, 1, 2]);
    expect(get('c')).toBe(3);
    expect([...memo.keys()]).toEqual(['b', 'c']);
    expect(get('a')).toBe(4);
    expect(made).toBe(4);
  });
});
