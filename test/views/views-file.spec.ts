import { parseFieldSelection, selectFields } from '../../src/core/http/field-selection.js';
import { COMPANY_ROUTES } from '../../src/upstreams/company/company.routes.js';
import { DEALS_ROUTES } from '../../src/upstreams/deals/deals.routes.js';
import { DOCUMENTS_ROUTES } from '../../src/upstreams/documents/documents.routes.js';
import { MACRO_ROUTES } from '../../src/upstreams/macro/macro.routes.js';
import { parseTemplate, resolveTemplate } from '../../src/views/view-template.js';
import { loadViewsFile, parseViewsDocument, type RouteCatalogEntry } from '../../src/views/views-file.js';

const catalog: RouteCatalogEntry[] = [
  { name: 'macro', prefixes: ['macro'], routes: MACRO_ROUTES },
  { name: 'company', prefixes: ['company'], routes: COMPANY_ROUTES },
  { name: 'documents', prefixes: ['documents', 'news'], routes: DOCUMENTS_ROUTES },
  { name: 'deals', prefixes: ['deals', 'dw'], routes: DEALS_ROUTES },
];
const limits = { maxTimeoutMs: 10_000 };

type Parts = Record<string, Record<string, unknown>>;
const doc = (parts: Parts, extra: Record<string, unknown> = {}) => ({
  views: {
    v: {
      description: 'test',
      params: { id: { type: 'integer', required: true, example: 1 } },
      parts,
      ...extra,
    },
  },
});
const parse = (d: unknown) => parseViewsDocument(d, catalog, limits, 'test.yaml');
const company = { route: 'company.companies.get', path: { id: '{{ params.id }}' } };

describe('views file', () => {
  it('accepts a valid view: route by id or gateway path (aliases too), steps from dependencies', () => {
    const set = parse(
      doc({
        a: company,
        b: { route: '/company/companies/{id}/statements', path: { id: '{{params.id}}' } },
        c: { route: '/news/Search/query/', query: { term: '{{ parts.a.data.items[0].companyName }}' } },
        d: { route: 'company.statements.accounts', path: { id: '{{ parts.b.data.items[0].statementId }}' } },
        e: { route: 'deals.deals.search', query: { term: '{{parts.d.data.total}}' }, optional: true },
      }),
    );
    const v = set.views.get('v')!;
    expect(v.parts.map((p) => [p.name, p.step, p.upstream])).toEqual([
      ['a', 1, 'company'],
      ['b', 1, 'company'],
      ['c', 2, 'documents'],
      ['d', 2, 'company'],
      ['e', 3, 'deals'],
    ]);
    expect(v.parts[2].prefix).toBe('documents');
  });

  it.each<[string, unknown, RegExp]>([
    [
      'an unknown route',
      doc({ a: { route: 'company.nope' } }),
      /view "v", parts\.a\.route: unknown route "company\.nope"/,
    ],
    [
      'a write route',
      doc({ a: { route: 'company.feeds.create' } }),
      /view "v", parts\.a\.route: .*is a write route \(POST\)/,
    ],
    [
      'a write route by path',
      doc({ a: { route: '/company/companies/dumps/{id}', path: { id: '1' } } }),
      // The path also takes a DELETE: the GET is the one a view names.
      /^$/,
    ],
    [
      'a path that only takes writes',
      doc({ a: { route: '/macro/userdefined/series/clone' } }),
      /parts\.a\.route: .*is a write route \(POST\)/,
    ],
    ['a file route', doc({ a: { route: 'documents.search.file' } }), /parts\.a\.route: .*answers a file/],
    ['a side effect', doc({ a: { route: 'documents.usage.report' } }), /parts\.a\.route: .*side effect/],
    [
      'a bad template',
      doc({ a: { ...company, path: { id: '{{ params.id + 1 }}' } } }),
      /view "v", parts\.a\.path\.id: bad template/,
    ],
    [
      'code in a template',
      doc({ a: company, b: { route: 'deals.deals.search', query: { term: '{{ parts.a.x() }}' } } }),
      /parts\.b\.query\.term: bad template/,
    ],
    [
      'an unclosed hole',
      doc({ a: { ...company, path: { id: '{{ params.id' } } }),
      /parts\.a\.path\.id: bad template/,
    ],
    [
      'a cycle',
      doc({
        a: { route: 'deals.deals.search', query: { term: '{{ parts.b.x }}' } },
        b: { route: 'deals.advisors.list', query: { term: '{{ parts.a.y }}' } },
      }),
      /view "v", parts\.a: a cycle: a → b → a/,
    ],
    [
      'a part reading itself',
      doc({ a: { route: 'deals.deals.search', query: { term: '{{ parts.a.x }}' } } }),
      /parts\.a: a part cannot read its own answer/,
    ],
    [
      'an unknown part',
      doc({ a: { route: 'deals.deals.search', query: { term: '{{ parts.zz.x }}' } } }),
      /parts\.a: reads unknown part "zz"/,
    ],
    [
      'an unknown parameter',
      doc({ a: { ...company, path: { id: '{{ params.companyId }}' } } }),
      /view "v", parts\.a\.path\.id: unknown parameter "params\.companyId"/,
    ],
    [
      'more than 3 steps',
      doc({
        a: company,
        b: { route: 'deals.deals.search', query: { term: '{{ parts.a.x }}' } },
        c: { route: 'deals.deals.search', query: { term: '{{ parts.b.x }}' } },
        d: { route: 'deals.deals.search', query: { term: '{{ parts.c.x }}' } },
      }),
      /view "v", parts\.d: runs at step 4; a view has at most 3 steps/,
    ],
    [
      'a missing path parameter',
      doc({ a: { route: 'company.companies.get' } }),
      /parts\.a\.path\.id: the route company\.companies\.get needs path parameter "id"/,
    ],
    [
      'an extra path parameter',
      doc({ a: { ...company, path: { id: '1', other: '2' } } }),
      /parts\.a\.path\.other: the route company\.companies\.get has no path parameter/,
    ],
    [
      'a key position in a part query',
      doc({ a: { route: 'deals.deals.search', query: { token: 'x' } } }),
      /parts\.a\.query\.token: "token" may not be set by a view/,
    ],
    [
      'a bad part field path',
      doc({ a: { ...company, fields: ['a..b'] } }),
      /parts\.a\.fields: .*empty segment/,
    ],
    ['an unknown part field', doc({ a: { ...company, optionl: true } }), /parts\.a\.optionl: unknown field/],
    [
      'a deadline over the maximum',
      doc({ a: company }, { timeoutMs: 60_000 }),
      /view "v", timeoutMs: must be/,
    ],
    [
      'a reserved parameter',
      { views: { v: { description: 'd', params: { fields: {} }, parts: { a: company } } } },
      /params\.fields: "fields" is the gateway's own/,
    ],
    [
      'a required parameter without an example',
      { views: { v: { description: 'd', params: { id: { required: true } }, parts: { a: company } } } },
      /params\.id\.example: a required parameter needs an example/,
    ],
    [
      'an example that does not fit',
      {
        views: {
          v: {
            description: 'd',
            params: { id: { type: 'integer', required: true, example: 'x' } },
            parts: { a: company },
          },
        },
      },
      /params\.id\.example: does not fit the parameter/,
    ],
    [
      'a bad view name',
      { views: { 'Bad Name': { description: 'd', parts: { a: company } } } },
      /view "Bad Name", name:/,
    ],
  ])('refuses %s, naming the view and the field', (_what, input, message) => {
    if (message.source === '^$') {
      expect(() => parse(input)).not.toThrow();
      return;
    }
    expect(() => parse(input)).toThrow(message);
  });

  it('reads the shipped views file', () => {
    const set = loadViewsFile('config/views.yaml', catalog, limits);
    expect([...set.views.keys()]).toEqual(['company-overview', 'series-overview', 'deal-overview']);
    for (const v of set.views.values()) expect(v.parts.length).toBeGreaterThanOrEqual(3);
  });

  it('refuses a file that is not YAML, naming the file', () => {
    expect(() => loadViewsFile('/no/such/views.yaml', catalog, limits)).toThrow(
      /views file \/no\/such\/views\.yaml: cannot read/,
    );
  });
});

describe('templates', () => {
  const ctx = {
    params: { id: '7', absent: undefined },
    parts: { a: { data: { items: [{ id: 42, tags: ['x', 'y'] }], empty: '' } } },
  };
  it('fills params and JSON paths into text', () => {
    expect(resolveTemplate(parseTemplate('id-{{ params.id }}'), ctx)).toEqual({ ok: true, value: 'id-7' });
    expect(resolveTemplate(parseTemplate('{{parts.a.data.items[0].id}}'), ctx)).toEqual({
      ok: true,
      value: '42',
    });
    expect(resolveTemplate(parseTemplate('{{parts.a.data.items[0].tags}}'), ctx)).toEqual({
      ok: true,
      value: ['x', 'y'],
    });
    expect(resolveTemplate(parseTemplate(5), ctx)).toEqual({ ok: true, value: '5' });
  });
  it('leaves out an absent parameter and reports an absent value', () => {
    expect(resolveTemplate(parseTemplate('{{ params.absent }}'), ctx)).toEqual({
      ok: true,
      value: undefined,
    });
    expect(resolveTemplate(parseTemplate('{{ parts.a.data.items[3].id }}'), ctx)).toEqual({
      ok: false,
      missing: 'parts.a.data.items[3].id',
    });
    expect(resolveTemplate(parseTemplate('{{ parts.a.data.empty }}'), ctx).ok).toBe(false);
  });
  it('accepts nothing but JSON paths', () => {
    for (const bad of [
      '{{ 1 + 1 }}',
      '{{ params }}',
      '{{ params.a.b }}',
      '{{ parts.a[0] + x }}',
      '{{ constructor }}',
      '{{ parts.a["k"] }}',
    ])
      expect(() => parseTemplate(bad)).toThrow();
  });
});

describe('field selection', () => {
  const value = {
    data: [
      { id: 1, name: 'a', extra: { deep: 1, other: 2 } },
      { id: 2, name: 'b' },
    ],
    meta: { total: 2, page: 1 },
  };
  it('keeps dotted paths, [] stepping into arrays', () => {
    expect(selectFields(value, parseFieldSelection('data[].id,data[].extra.deep,meta.total'))).toEqual({
      data: [{ id: 1, extra: { deep: 1 } }, { id: 2 }],
      meta: { total: 2 },
    });
    expect(selectFields([{ a: 1, b: 2 }], parseFieldSelection('[].a'))).toEqual([{ a: 1 }]);
    expect(selectFields(value, parseFieldSelection('meta'))).toEqual({ meta: { total: 2, page: 1 } });
  });
  it('leaves out what is absent, and does not change the input', () => {
    const before = JSON.stringify(value);
    expect(selectFields(value, parseFieldSelection('nope.x,data.id'))).toEqual({});
    expect(JSON.stringify(value)).toBe(before);
  });
  it.each(['', 'a..b', 'a[0]', 'a.[]', 'a b', 'a,,b', 'x'.repeat(300), Array(70).fill('a').join(',')])(
    'refuses %p',
    (bad) => {
      expect(() => parseFieldSelection(bad)).toThrow();
    },
  );
});
