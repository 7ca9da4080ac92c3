import { MACRO_ROUTES } from '../../src/upstreams/macro/macro.routes.js';
import { WRITE_METHODS, type RouteDefinition } from '../../src/proxy/pipeline.types.js';
import { specOperations } from '../helpers/spec-operations.js';

/** Route tables under test; the other interfaces join this list as they are routed. */
const TABLES: Record<string, readonly RouteDefinition[]> = {
  macro: MACRO_ROUTES,
};

describe.each(Object.entries(TABLES))('route table %s', (upstream, routes) => {
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
});
