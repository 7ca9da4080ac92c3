import type { RouteOptions } from 'fastify';
import { createDocumentApp } from '../../src/document-app.js';
import { testConsumer } from '../helpers/consumers.js';
import { http, type HttpResult, withGateway } from '../helpers/gateway.js';

// HEAD is GET without a body (RFC 9110 §9.3.2), on every route the gateway serves: the same status and
// the same content type, no body; a path that takes no GET answers HEAD 405 with `Allow`. Walks the route
// table (every route the HTTP server registers, as the controllers policy does) against the sandbox, with
// the documented example of each parameter where /docs has one.

type Sample = string | number | boolean;
type DocParameter = {
  name: string;
  in: string;
  required?: boolean;
  example?: Sample;
  schema?: { example?: Sample; default?: Sample; enum?: Sample[]; type?: string };
};
type DocOperation = { parameters?: DocParameter[] };

/** The route table: path → methods, as Fastify registered them (HEAD routes of GETs included). */
async function routeTable(): Promise<Map<string, Set<string>>> {
  const routes: RouteOptions[] = [];
  const app = await createDocumentApp((a) =>
    a
      .getHttpAdapter()
      .getInstance()
      .addHook('onRoute', (r) => {
        routes.push(r);
      }),
  );
  await app.close();
  const table = new Map<string, Set<string>>();
  for (const r of routes)
    for (const m of [r.method].flat()) {
      if (!table.has(r.url)) table.set(r.url, new Set());
      table.get(r.url)!.add(String(m));
    }
  return table;
}

describe('HEAD on every route answers as GET without a body', () => {
  const app = testConsumer({ id: 'head-walker' });
  const gw = withGateway({ sandbox: true, consumers: [app] });
  let table: Map<string, Set<string>>;
  let docs: Record<string, { get?: DocOperation }>;

  beforeAll(async () => {
    table = await routeTable();
    docs = (await http(`${gw.url}/docs/json`)).json().paths;
  }, 60_000);

  /** A URL for a route: documented examples for its parameters and required query, `x` for the rest. */
  const urlOf = (route: string): string => {
    const op = docs[route.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}')]?.get;
    const sample = (p: DocParameter) =>
      String(
        p.example ??
          p.schema?.example ??
          p.schema?.default ??
          p.schema?.enum?.[0] ??
          (p.schema?.type === 'integer' ? 1 : 'x'),
      );
    let path = route;
    const query: string[] = [];
    for (const p of op?.parameters ?? []) {
      if (p.in === 'path') path = path.replace(`:${p.name}`, encodeURIComponent(sample(p)));
      else if (p.in === 'query' && p.required) query.push(`${p.name}=${encodeURIComponent(sample(p))}`);
    }
    path = path.replace(/:[A-Za-z_][A-Za-z0-9_]*/g, 'x').replace(/\*$/, 'x');
    return query.length ? `${path}?${query.join('&')}` : path;
  };
  const send = (method: 'GET' | 'HEAD', url: string): Promise<HttpResult> =>
    http(gw.url + url, { method, headers: { authorization: `Bearer ${app.key}` } });

  it('every GET route: HEAD has the status and content type of GET, and no body', async () => {
    const differ: string[] = [];
    const statuses = new Map<number, number>();
    let walked = 0;
    for (const [route, methods] of table) {
      if (!methods.has('GET')) continue;
      // Fastify adds a HEAD route beside every GET (exposeHeadRoutes): the one HEAD answers through.
      expect(methods.has('HEAD')).toBe(true);
      const url = urlOf(route);
      // HEAD first: a miss for HEAD, then GET (a cache hit where the route caches, as a client would see).
      const head = await send('HEAD', url);
      const get = await send('GET', url);
      walked++;
      statuses.set(get.status, (statuses.get(get.status) ?? 0) + 1);
      const seen = {
        status: head.status,
        body: head.text.length,
        type: head.headers['content-type'],
      };
      const want = { status: get.status, body: 0, type: get.headers['content-type'] };
      if (JSON.stringify(seen) !== JSON.stringify(want))
        differ.push(`${url}: HEAD ${JSON.stringify(seen)} GET ${JSON.stringify(want)}`);
    }
    expect(differ).toEqual([]);
    expect(walked).toBeGreaterThan(140);
    // The walk reached the vendors, not only refusals: most routes answered 200.
    expect(statuses.get(200) ?? 0).toBeGreaterThan(walked / 2);
    expect([...statuses.keys()].filter((s) => s >= 500)).toEqual([]);
  }, 120_000);

  it('a path that takes no GET answers HEAD as it answers GET: 405 with Allow, without a body', async () => {
    const differ: string[] = [];
    let refusedWith405 = 0;
    for (const [route, methods] of table) {
      if (methods.has('GET') || route.includes('*')) continue;
      const url = urlOf(route);
      const head = await send('HEAD', url);
      const get = await send('GET', url);
      // A path may still reach a GET route of a parameter (`/userdefined/series/clone` is series "clone").
      const want = { status: get.status, allow: get.headers.allow, body: 0 };
      const seen = { status: head.status, allow: head.headers.allow, body: head.text.length };
      if (JSON.stringify(seen) !== JSON.stringify(want))
        differ.push(
          `${url} [${[...methods].join(',')}]: HEAD ${JSON.stringify(seen)} GET ${JSON.stringify(want)}`,
        );
      if (head.status === 405) {
        refusedWith405++;
        if (!head.headers.allow || /\b(GET|HEAD)\b/.test(head.headers.allow))
          differ.push(`${url}: 405 with Allow ${head.headers.allow}`);
      }
    }
    expect(differ).toEqual([]);
    expect(refusedWith405).toBeGreaterThan(5);
  }, 60_000);
});
