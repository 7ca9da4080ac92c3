import { readdirSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { mayRetry } from '../../src/proxy/stages/retries.js';
import { WRITE_METHODS, type RouteDefinition } from '../../src/proxy/pipeline.types.js';
import { proxyRequest } from '../helpers/proxy-request.js';

/** Every route table under src/upstreams (so an upstream added later is covered without editing this). */
function allRoutes(): Array<[string, RouteDefinition]> {
  const root = resolve(__dirname, '../../src/upstreams');
  const out: Array<[string, RouteDefinition]> = [];
  for (const dir of readdirSync(root)) {
    const file = join(root, dir, `${dir}.routes.ts`);
    if (!existsSync(file)) continue;
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- Jest loads the TS table through its transform
    const mod = require(file) as Record<string, unknown>;
    for (const value of Object.values(mod))
      if (
        Array.isArray(value) &&
        value.every((r) => typeof r === 'object' && r && 'method' in r && 'path' in r)
      )
        for (const r of value as RouteDefinition[]) out.push([r.id, r]);
  }
  return out;
}

describe('retry policy over every route table', () => {
  const routes = allRoutes();

  it('finds the route tables', () => {
    expect(routes.length).toBeGreaterThan(20);
  });

  it.each(routes)('%s: retried only if an idempotent GET without side effect or file', (_id, route) => {
    const retried = mayRetry(proxyRequest({ route, method: route.method }));
    const expected = route.method === 'GET' && !route.sideEffect && !route.file;
    expect(retried).toBe(expected);
    if (WRITE_METHODS.has(route.method)) expect(retried).toBe(false);
  });

  it('route costs are whole numbers ≥ 1 (the limits refuse to start otherwise)', () => {
    for (const [, r] of routes) expect(Number.isInteger(r.cost ?? 1) && (r.cost ?? 1) >= 1).toBe(true);
  });
});
