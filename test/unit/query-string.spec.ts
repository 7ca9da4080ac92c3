import { parseQuery, stringifyQuery, toQueryObject } from '../../src/core/http/query-string.js';

describe('query strings as pairs', () => {
  it('keeps order, decodes %XX and + as space', () => {
    expect(parseQuery('b=2&a=x+y&c=%2C&d')).toEqual([
      ['b', '2'],
      ['a', 'x y'],
      ['c', ','],
      ['d', ''],
    ]);
  });

  it('tolerates an empty query, stray & and a bad escape', () => {
    expect(parseQuery('')).toEqual([]);
    expect(parseQuery('&&a=1&')).toEqual([['a', '1']]);
    expect(parseQuery('a=%E0%A4%A')).toEqual([['a', '%E0%A4%A']]);
  });

  it('groups k[0]=, k[]= and repeated k= into arrays', () => {
    const o = toQueryObject(parseQuery('countries[0]=HU&countries[1]=PL&formats[]=1&status=A&status=B&x=1'));
    expect(o).toEqual({ countries: ['HU', 'PL'], formats: ['1'], status: ['A', 'B'], x: '1' });
  });

  it('re-encodes faithfully: + in a value stays %2B, brackets in keys stay', () => {
    const pairs = parseQuery('date=2001-02-03T04%3A05%3A06%2B0000&countries[0]=HU&q=a+b');
    expect(stringifyQuery(pairs)).toBe('date=2001-02-03T04%3A05%3A06%2B0000&countries[0]=HU&q=a%20b');
  });
});
