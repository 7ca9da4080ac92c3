import {
  formatFromQuery,
  negotiateFormat,
  negotiateLanguage,
  wantsXml,
} from '../../src/core/http/negotiation.js';

describe('negotiateFormat', () => {
  it.each([
    [undefined, 'json'],
    ['*/*', 'json'],
    ['application/json, text/plain, */*', 'json'],
    ['application/json', 'json'],
    ['application/xml', 'xml'],
    ['text/xml', 'xml'],
    ['application/xml;q=0.9, application/json;q=0.5', 'xml'],
    ['application/json;q=0.5, application/xml', 'xml'],
    ['application/*', 'json'],
  ])('%s → %s', (accept, expected) => expect(negotiateFormat(accept)).toBe(expected));

  it.each(['text/csv', 'text/html', 'image/png', 'application/json;q=0'])(
    '%s admits neither → undefined',
    (a) => expect(negotiateFormat(a)).toBeUndefined(),
  );
});

describe('formatFromQuery', () => {
  it('accepts json and xml in any case', () => {
    expect(formatFromQuery('XML')).toBe('xml');
    expect(formatFromQuery('json')).toBe('json');
    expect(formatFromQuery('csv')).toBeUndefined();
  });
});

describe('negotiateLanguage', () => {
  const langs = ['en', 'zh', 'ru', 'id', 'jp'];
  it.each([
    [undefined, 'en'],
    ['en-US,en;q=0.9,zh;q=0.8', 'en'],
    ['zh-CN,zh;q=0.9,en;q=0.5', 'zh'],
    ['fr-FR,fr;q=0.9', 'en'],
    ['fr;q=1, ru;q=0.4', 'ru'],
    ['ja', 'jp'],
    ['de, id;q=0.1', 'id'],
  ])('%s → %s', (header, expected) => expect(negotiateLanguage(header, langs, 'en')).toBe(expected));
});

describe('wantsXml', () => {
  it('format query wins over Accept', () => {
    expect(wantsXml('xml', 'application/json')).toBe(true);
    expect(wantsXml('json', 'application/xml')).toBe(false);
    expect(wantsXml(undefined, 'application/xml')).toBe(true);
    expect(wantsXml(undefined, undefined)).toBe(false);
  });
});
