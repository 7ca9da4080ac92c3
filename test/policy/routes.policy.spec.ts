import { COMPANY_ROUTES } from '../../src/upstreams/company/company.routes.js';
import { DEALS_ROUTES } from '../../src/upstreams/deals/deals.routes.js';
import { DOCUMENTS_ROUTES } from '../../src/upstreams/documents/documents.routes.js';
import { WRITE_METHODS, type RouteDefinition } from '../../src/proxy/pipeline.types.js';
import { UPSTREAMS, type UpstreamName } from '../../src/upstreams/index.js';
import { allSpecOperations, specOperations } from '../helpers/spec-operations.js';

/** Route tables under test: every declared interface's (src/upstreams/index.ts). */
const TABLES = Object.fromEntries(UPSTREAMS.map((u) => [u.name, u.routes])) as Record<
  UpstreamName,
  readonly RouteDefinition[]
>;

it('the operations fixture lists the 136 operations of the four interfaces, each once', () => {
  const ops = allSpecOperations();
  expect(ops).toHaveLength(136);
  expect(new Set(ops.map((o) => `${o.interface} ${o.method} ${o.path}`)).size).toBe(136);
  expect(Object.keys(TABLES).sort()).toEqual([...new Set(ops.map((o) => o.interface))].sort());
});

describe.each(Object.entries(TABLES) as Array<[keyof typeof TABLES, readonly RouteDefinition[]]>)(
  'route table %s',
  (upstream, routes) => {
    const spec = specOperations(upstream);

    it('the spec lists operations for it', () => expect(spec.length).toBeGreaterThan(3));

    it('routes every operation of the spec with its method, path unchanged', () => {
      const routed = new Set(routes.map((r) => `${r.method} ${r.path}`));
      const missing = spec.filter((op) => !routed.has(`${op.method} ${op.path}`));
      expect(missing).toEqual([]);
    });

    it('routes nothing the spec does not list', () => {
      const listed = new Set(spec.map((op) => `${op.method} ${op.path}`));
      expect(routes.filter((r) => !listed.has(`${r.method} ${r.path}`)).map((r) => r.id)).toEqual([]);
    });

    it('has unique route ids, prefixed with the upstream', () => {
      const ids = routes.map((r) => r.id);
      expect(new Set(ids).size).toBe(ids.length);
      for (const id of ids) expect(id.startsWith(`${upstream}.`)).toBe(true);
    });

    it('never caches a write, a side-effecting GET or a file', () => {
      const bad = routes.filter(
        (r) =>
          r.cacheTtlMs !== undefined &&
          (WRITE_METHODS.has(r.method) || r.sideEffect === true || r.file === true),
      );
      expect(bad.map((r) => r.id)).toEqual([]);
    });

    it('declares a TTL for every cacheable GET', () => {
      const missing = routes.filter(
        (r) => r.method === 'GET' && !r.sideEffect && !r.file && !(Number(r.cacheTtlMs) > 0),
      );
      expect(missing.map((r) => r.id)).toEqual([]);
    });
  },
);

describe('EMIS and company specifics', () => {
  const ALL: readonly RouteDefinition[] = [...COMPANY_ROUTES, ...DOCUMENTS_ROUTES, ...DEALS_ROUTES];
  const byPath = (routes: readonly RouteDefinition[], path: string) => routes.find((r) => r.path === path);

  it('marks the usage reports as side-effecting GETs (never cached, coalesced or retried)', () => {
    for (const path of ['/Usage/report/', '/Usage/reportMultiple/']) {
      const r = byPath(DOCUMENTS_ROUTES, path);
      expect(r).toMatchObject({ method: 'GET', sideEffect: true });
      expect(r?.cacheTtlMs).toBeUndefined();
    }
    const marked = ALL.filter((r) => r.sideEffect);
    expect(marked.map((r) => r.path).sort()).toEqual(['/Usage/report/', '/Usage/reportMultiple/']);
  });

  it('marks the file answers as files', () => {
    const files = ALL.filter((r) => r.file);
    expect(files.map((r) => r.path).sort()).toEqual([
      '/Search/getFile/',
      '/companies/{id}/external_download/{class_code}',
    ]);
  });

  it('keeps the EMIS spelling: class and method casing, trailing slash', () => {
    for (const r of [...DOCUMENTS_ROUTES, ...DEALS_ROUTES]) expect(r.path).toMatch(/^\/[A-Z]\w+\/\w+\/$/);
  });
});
