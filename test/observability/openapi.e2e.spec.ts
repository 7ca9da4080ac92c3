import SwaggerParser from '@apidevtools/swagger-parser';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import type { RouteOptions } from 'fastify';
import { AppModule } from '../../src/app.module.js';
import { loadConfig } from '../../src/config/atrium-config.js';
import { configureApp, createAdapter, NEST_APP_OPTIONS } from '../../src/configure-app.js';
import { ERROR_STATUS } from '../../src/core/errors/error-codes.js';
import { ProxyService } from '../../src/proxy/proxy.service.js';
import { WRITE_METHODS } from '../../src/proxy/pipeline.types.js';
import { clientOperations } from '../../src/docs/client-generator.js';
import { http } from '../helpers/gateway.js';
import { UPSTREAM_NAMES, UPSTREAMS } from '../../src/upstreams/index.js';

type Doc = {
  openapi: string;
  paths: Record<string, Record<string, Record<string, any>>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  components: Record<string, Record<string, any>>; // eslint-disable-line @typescript-eslint/no-explicit-any
  tags: Array<{ name: string; description?: string }>;
};

const HTTP_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'];

/** `/macro/series/:id/data` → `/macro/series/{id}/data`; trailing slashes do not distinguish routes here. */
function normalise(path: string): string {
  const p = path.replace(/:([A-Za-z_][A-Za-z0-9_]*)/g, '{$1}');
  return p.length > 1 ? p.replace(/\/+$/, '') : p;
}

describe('OpenAPI document at /docs and /docs/json', () => {
  const routes: Array<{ method: string; url: string }> = [];
  let app: NestFastifyApplication;
  let url: string;
  let doc: Doc;

  beforeAll(async () => {
    // Every upstream configured (never called): all of their routes are registered.
    const env: Record<string, string> = { PORT: '0', HOST: '127.0.0.1' };
    for (const n of UPSTREAM_NAMES) {
      env[`UPSTREAM_${n.toUpperCase()}_BASE_URL`] = 'http://127.0.0.1:9';
      env[`UPSTREAM_${n.toUpperCase()}_TOKEN`] = 'openapi-test-token';
    }
    const config = loadConfig(env, UPSTREAMS);
    const mod = await Test.createTestingModule({
      imports: [AppModule.forRoot({ config, consumers: [] })],
    }).compile();
    app = mod.createNestApplication<NestFastifyApplication>(createAdapter(config), {
      ...NEST_APP_OPTIONS,
      logger: false,
    });
    // The real Fastify routes, as registered (before any is).
    app
      .getHttpAdapter()
      .getInstance()
      .addHook('onRoute', (r: RouteOptions) => {
        for (const m of [r.method].flat()) routes.push({ method: String(m).toUpperCase(), url: r.url });
      });
    configureApp(app);
    await app.listen(0, '127.0.0.1');
    const address = app.getHttpServer().address();
    url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
    const res = await http(`${url}/docs/json`);
    expect(res.status).toBe(200);
    doc = res.json();
  });
  afterAll(async () => app?.close());

  it('serves Swagger UI at /docs and the document at /docs/json without a key', async () => {
    const ui = await http(`${url}/docs`);
    expect(ui.status).toBe(200);
    expect(ui.headers['content-type']).toContain('text/html');
    expect(ui.text).toContain('swagger-ui');
    const yaml = await http(`${url}/docs/yaml`);
    expect(yaml.status).toBe(200);
    expect(yaml.text).toContain('openapi: 3.0.3');
  });

  it('validates as OpenAPI 3', async () => {
    expect(doc.openapi).toBe('3.0.3');
    await expect(SwaggerParser.validate(structuredClone(doc) as never)).resolves.toBeDefined();
    // The validator checks the OpenAPI 3 schema (path parameters are checked by the next tests): a
    // parameter placed in a Swagger-2 position fails it.
    const broken = structuredClone(doc);
    broken.paths['/macro/feeds'].get.parameters[0].in = 'body';
    await expect(SwaggerParser.validate(broken as never)).rejects.toThrow();
  });

  it('documents every operation of every registered route table, under each prefix, with its route id', () => {
    const upstreams = app.get(ProxyService).all();
    expect(upstreams.length).toBeGreaterThan(0);
    const missing: string[] = [];
    let count = 0;
    for (const { def } of upstreams)
      for (const [i, prefix] of def.prefixes.entries())
        for (const route of def.routes) {
          count++;
          const op = doc.paths[`/${prefix}${route.path}`]?.[route.method.toLowerCase()];
          if (!op) missing.push(`${route.method} /${prefix}${route.path}`);
          else {
            expect(op['x-atrium-route'].id).toBe(route.id);
            expect(op.tags).toEqual([def.name]);
            if (i === 0) expect(op.operationId).toBe(route.id);
            else expect(op['x-atrium-alias-of']).toBe(`/${def.prefixes[0]}${route.path}`);
          }
        }
    expect(missing).toEqual([]);
    expect(count).toBeGreaterThan(60);
  });

  it('documents every real Fastify route (other than the docs themselves), and nothing that is not routed', () => {
    const real = routes.filter(
      (r) => HTTP_METHODS.includes(r.method) && !r.url.includes('*') && !/^\/docs(\/|$)/.test(r.url),
    );
    expect(real.length).toBeGreaterThan(60);
    const documented = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths))
      for (const [m, op] of Object.entries(item))
        // Each view is an operation of its own, served by the one GET /views/{name} route.
        documented.add(`${m.toUpperCase()} ${normalise(op['x-atrium-view'] ? '/views/{name}' : path)}`);
    const undocumented = real.map((r) => `${r.method} ${normalise(r.url)}`).filter((k) => !documented.has(k));
    expect(undocumented).toEqual([]);
    const routed = new Set(real.map((r) => `${r.method} ${normalise(r.url)}`));
    expect([...documented].filter((k) => !routed.has(k))).toEqual([]);
  });

  it('declares the path parameters of every templated path, and unique operation ids', () => {
    const ids = new Set<string>();
    for (const [path, item] of Object.entries(doc.paths))
      for (const op of Object.values(item)) {
        const declared = (op.parameters ?? []).filter((p: any) => p.in === 'path').map((p: any) => p.name); // eslint-disable-line @typescript-eslint/no-explicit-any
        expect(declared.sort()).toEqual([...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]).sort());
        expect(ids.has(op.operationId)).toBe(false);
        ids.add(op.operationId);
      }
  });

  it('has the key positions as security schemes on gateway operations, and public endpoints without them', () => {
    const schemes = doc.components.securitySchemes;
    expect(schemes.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes.apiKey).toMatchObject({ type: 'apiKey', in: 'header', name: 'X-API-Key' });
    expect(schemes.token).toMatchObject({ type: 'apiKey', in: 'query', name: 'token' });
    const feeds = doc.paths['/macro/feeds'].get;
    expect(feeds.security).toEqual([{ bearer: [] }, { apiKey: [] }, { token: [] }, { sessionId: [] }]);
    // A key position is a scheme, never a documented parameter.
    for (const item of Object.values(doc.paths))
      for (const op of Object.values(item))
        for (const p of op.parameters ?? []) expect(['token', 'sessionId']).not.toContain(p.name);
    expect(doc.paths['/health/live'].get.security).toBeUndefined();
    expect(doc.paths['/metrics'].get.security).toEqual([{ metricsToken: [] }]);
  });

  it('describes the error envelope, every error code, and an example per error status', () => {
    const s = doc.components.schemas;
    expect(s.ErrorCode.enum).toEqual(Object.keys(ERROR_STATUS));
    expect(s.ErrorEnvelope.properties.error.$ref).toBe('#/components/schemas/ErrorBody');
    expect(s.ErrorBody.required).toEqual(['code', 'message', 'status', 'retryable', 'requestId']);
    const responses = doc.components.responses;
    for (const r of Object.values(responses)) {
      const example = r.content['application/json'].example;
      expect(example.error).toMatchObject({ code: expect.any(String), status: expect.any(Number) });
      expect(s.ErrorCode.enum).toContain(example.error.code);
    }
    expect(responses.RateLimited.headers['retry-after']).toBeDefined();
    const feeds = doc.paths['/macro/feeds'].get;
    for (const status of ['400', '401', '403', '404', '415', '429', '502', '503', '504'])
      expect(feeds.responses[status].$ref).toMatch(/^#\/components\/responses\//);
    expect(doc.paths['/macro/feeds'].post.responses['413']).toBeDefined();
    expect(feeds.responses['413']).toBeUndefined();
  });

  it('documents the two specified operations fully: parameters with their rules, schemas and examples', () => {
    const feeds = doc.paths['/macro/feeds'].get;
    const p = Object.fromEntries(feeds.parameters.map((x: any) => [x.name, x])); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(p.limit.schema).toMatchObject({ type: 'integer', minimum: 1, maximum: 100 });
    expect(p.offset.schema).toMatchObject({ type: 'integer', minimum: 0 });
    expect(p.created_order.schema.enum).toEqual(['ASC', 'DESC']);
    expect(p.status.schema).toMatchObject({ type: 'array', items: { enum: ['ACTIVE', 'DELETED'] } });
    expect(p.lang.schema.enum).toEqual(['en', 'zh', 'ru', 'id', 'jp']);
    expect(p.format.schema.enum).toEqual(['json', 'xml']);
    expect(p.with_model_information.schema.type).toBe('boolean');
    expect(p.created_after.schema.format).toBe('date');
    const ok = feeds.responses['200'].content['application/json'];
    expect(ok.schema.$ref).toBe('#/components/schemas/FeedsResult');
    expect(ok.example.data[0].id).toBeDefined();
    expect(feeds.responses['200'].headers['x-cache']).toBeDefined();

    const table = doc.paths['/macro/layout/tables/{id}'].get;
    expect(table.parameters.find((x: any) => x.name === 'id')).toMatchObject({ in: 'path', required: true }); // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(table.responses['200'].content['application/json'].schema.$ref).toBe(
      '#/components/schemas/LayoutFullMetadataResult',
    );
    expect(doc.components.schemas.LayoutFullMetadataItem.properties.ancestors).toBeDefined();
  });

  it('groups operations by upstream (tags) and documents writes with their bodies', () => {
    const names = doc.tags.map((t) => t.name);
    for (const { def } of app.get(ProxyService).all()) expect(names).toContain(def.name);
    expect(doc.tags.find((t) => t.name === 'macro')?.description).toContain('/macro');
    const create = doc.paths['/macro/feeds'].post;
    expect(Object.keys(create.requestBody.content)).toEqual([
      'application/x-www-form-urlencoded',
      'application/json',
    ]);
    expect(create.requestBody.content['application/x-www-form-urlencoded'].schema.required).toEqual([
      'filter_id',
    ]);
    for (const item of Object.values(doc.paths))
      for (const [m, op] of Object.entries(item))
        if (op['x-atrium-route'] && WRITE_METHODS.has(m.toUpperCase() as never) && m !== 'delete')
          expect(op.requestBody).toBeDefined();
  });

  it('the generated client covers every canonical gateway operation', () => {
    const covered = new Set(clientOperations(doc as never).map((o) => o.id));
    for (const { def } of app.get(ProxyService).all())
      for (const route of def.routes) expect(covered.has(route.id)).toBe(true);
  });

  it('documents the query parameters of the usage report (from, to, consumer, upstream, format)', () => {
    const report = doc.paths['/admin/usage'].get;
    const params = report.parameters as Array<{ name: string; in: string; schema: Record<string, unknown> }>;
    expect(params.map((p) => [p.name, p.in])).toEqual([
      ['from', 'query'],
      ['to', 'query'],
      ['consumer', 'query'],
      ['upstream', 'query'],
      ['format', 'query'],
    ]);
    expect(params[0].schema).toEqual({ type: 'string', format: 'date' });
    expect(params[4].schema.enum).toEqual(['json', 'csv']);
    expect(report.summary).toBeTruthy();
  });

  it('documents the cache purge: its fields as query parameters and as a JSON body', () => {
    const purge = doc.paths['/admin/cache/purge'].post;
    const fields = ['upstream', 'pathPrefix', 'path'];
    expect((purge.parameters as Array<{ name: string; in: string }>).map((p) => [p.name, p.in])).toEqual(
      fields.map((f) => [f, 'query']),
    );
    expect(Object.keys(purge.requestBody.content['application/json'].schema.properties)).toEqual(fields);
    expect(purge.requestBody.required).toBe(false);
  });
});
