import { BoundedMemo } from '../../src/core/memo/bounded-memo.js';

describe('BoundedMemo', () => {
  it('makes a value once per key and keeps at most max, the oldest out first', () => {
    const memo = new BoundedMemo<string, number>(2);
    let made = 0;
    const get = (k: string) => memo.get(k, () => ++made);
    expect([get('a'), get('a'), get('b')]).toEqual([1, 1, 2]);
    expect(get('c')).toBe(3);
    expect(memo.keys()).toEqual(['b', 'c']);
    expect(get('a')).toBe(4);
    expect(memo.keys()).toEqual(['c', 'a']);
    expect(memo.peek('b')).toBeUndefined();
    expect(memo.peek('c')).toBe(3);
    expect(made).toBe(4);
  });

  it('stays bounded and evicts in order over many wraps of its ring', () => {
    const memo = new BoundedMemo<number, number>(3);
    for (let i = 0; i < 1000; i++) memo.get(i, () => i * 2);
    expect(memo.size).toBe(3);
    expect(memo.keys()).toEqual([997, 998, 999]);
    expect(memo.peek(998)).toBe(1996);
  });

  it('refuses a bound that is not a positive integer', () => {
    expect(() => new BoundedMemo(0)).toThrow(/positive integer/);
    expect(() => new BoundedMemo(1.5)).toThrow(/positive integer/);
  });
});
