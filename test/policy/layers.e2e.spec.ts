import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

// The layering is enforced by eslint-plugin-boundaries (eslint.layers.mjs, used by eslint.config.mjs), whose
// table of allowed folder arrows is acyclic, and by the folder cycle check (scripts/check-cycles.mjs) on the
// tree as it is. Putting back an upward import must fail lint; these lint snippets as if they were files of
// each layer. ESLint is ESM-only here, so it runs in a child Node.

const ROOT = join(__dirname, '..', '..');

interface Case {
  readonly file: string;
  readonly from: string;
  readonly restricted: boolean;
}

const CASES: Case[] = [
  // proxy: only proxy, core and config; at any depth.
  { file: 'src/proxy/pipeline.ts', from: '../metrics/gateway-metrics.js', restricted: true },
  { file: 'src/proxy/pipeline.ts', from: '../health/readiness.service.js', restricted: true },
  { file: 'src/proxy/pipeline.ts', from: '../docs/route-docs.decorators.js', restricted: true },
  { file: 'src/proxy/pipeline.ts', from: '../redis/redis.module.js', restricted: true },
  { file: 'src/proxy/cache/cache-key.ts', from: '../../upstreams/macro/macro.routes.js', restricted: true },
  { file: 'src/proxy/stages/cache.stage.ts', from: '../../metrics/gateway-metrics.js', restricted: true },
  // proxy: no vendor knowledge.
  { file: 'src/proxy/pipeline.ts', from: '../upstreams/macro/macro.routes.js', restricted: true },
  { file: 'src/proxy/pipeline.ts', from: '../upstreams/index.js', restricted: true },
  { file: 'src/proxy/pipeline.ts', from: '../sandbox/demo-consumer.js', restricted: true },
  { file: 'src/proxy/pipeline.ts', from: 'undici', restricted: false },
  { file: 'src/proxy/pipeline.ts', from: '../core/ports/metrics.port.js', restricted: false },
  { file: 'src/proxy/pipeline.ts', from: '../config/atrium-config.js', restricted: false },
  { file: 'src/proxy/stages/cache.stage.ts', from: '../cache/cache-key.js', restricted: false },
  // core: only core and config.
  { file: 'src/core/core.module.ts', from: '../proxy/proxy.service.js', restricted: true },
  { file: 'src/core/core.module.ts', from: '../upstreams/index.js', restricted: true },
  { file: 'src/core/core.module.ts', from: '../upstreams/macro/macro.routes.js', restricted: true },
  { file: 'src/core/throttling/throttling.module.ts', from: '../../redis/redis.module.js', restricted: true },
  {
    file: 'src/core/throttling/throttling.module.ts',
    from: '../../metrics/metrics.module.js',
    restricted: true,
  },
  { file: 'src/core/throttling/throttling.module.ts', from: '../ports/redis.port.js', restricted: false },
  { file: 'src/core/logging/logging.module.ts', from: '../../config/atrium-config.js', restricted: false },
  // sandbox: it starts the declarations it is given and never reads the index (which loads the fakes).
  { file: 'src/sandbox/start-sandbox.ts', from: '../upstreams/index.js', restricted: true },
  { file: 'src/sandbox/start-sandbox.ts', from: '../upstreams/upstream-declaration.js', restricted: false },
  {
    file: 'src/upstreams/macro/macro.upstream.ts',
    from: '../../sandbox/macro/fake-macro.upstream.js',
    restricted: false,
  },
  // config: the bottom.
  { file: 'src/config/atrium-config.ts', from: '../core/http/retry-after.js', restricted: true },
  // each upstream: no other upstream but shared.
  {
    file: 'src/upstreams/deals/deals.upstream.ts',
    from: '../documents/documents.routes.js',
    restricted: true,
  },
  {
    file: 'src/upstreams/macro/dto/feeds-query.dto.ts',
    from: '../../company/company.routes.js',
    restricted: true,
  },
  { file: 'src/upstreams/deals/deals.upstream.ts', from: '../shared/emis-definition.js', restricted: false },
  { file: 'src/upstreams/deals/deals.upstream.ts', from: '../../proxy/proxy.service.js', restricted: false },
  { file: 'src/upstreams/deals/deals.upstream.ts', from: '../upstream-declaration.js', restricted: false },
  { file: 'src/upstreams/macro/macro.upstream.ts', from: '../index.js', restricted: true },
  // a folder arrow the table does not list (route-calls -> views would close a cycle).
  { file: 'src/route-calls/route-caller.ts', from: '../views/view-runner.js', restricted: true },
];

const SCRIPT = `
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { layerZones, LAYERS } from './eslint.layers.mjs';
const cases = JSON.parse(process.argv[1]);
// Only the parser and the zones: fast, no type information needed for import rules.
const eslint = new ESLint({
  cwd: process.cwd(),
  overrideConfigFile: true,
  overrideConfig: [{ files: ['**/*.ts'], languageOptions: { parser: tseslint.parser } }, ...layerZones],
});
const project = new ESLint({ cwd: process.cwd() });
const out = [];
for (const c of cases) {
  const [r] = await eslint.lintText("import { x } from '" + c.from + "';\\nexport const y = x;\\n", { filePath: c.file });
  out.push(r.messages.some((m) => m.ruleId === 'boundaries/dependencies'));
}
// The project's own config (what npm run lint uses) carries the zones for each layer.
const wired = [];
for (const f of ['src/proxy/pipeline.ts', 'src/proxy/cache/cache-key.ts', 'src/core/core.module.ts', 'src/upstreams/macro/macro.upstream.ts'])
  wired.push(Boolean((await project.calculateConfigForFile(f)).rules['boundaries/dependencies']));
console.log(JSON.stringify({ out, wired, layers: LAYERS }));
`;

describe('layer zones: an upward import fails lint', () => {
  let result: { out: boolean[]; wired: boolean[]; layers: Record<string, string[]> };
  beforeAll(() => {
    const stdout = execFileSync(
      process.execPath,
      ['--input-type=module', '-e', SCRIPT, JSON.stringify(CASES)],
      {
        cwd: ROOT,
        encoding: 'utf8',
      },
    );
    result = JSON.parse(stdout) as typeof result;
  }, 60_000);

  it.each(CASES.map((c, i) => [c.file, c.from, c.restricted, i] as const))(
    '%s importing %s: restricted %s',
    (_file, _from, restricted, i) => expect(result.out[i]).toBe(restricted),
  );

  it('eslint.config.mjs applies the boundaries to proxy, nested proxy, core and upstream files', () => {
    expect(result.wired).toEqual([true, true, true, true]);
  });

  it('the table of allowed folder arrows has no cycle (the entry points aside, which nothing imports)', () => {
    const { entry: _entry, ...layers } = result.layers;
    const left = new Map(Object.entries(layers).map(([k, v]) => [k, v.filter((t) => t !== k)]));
    // Peel off elements that import nothing still left; whatever remains lies on a cycle.
    for (let peeled = true; peeled;) {
      peeled = false;
      for (const [k, v] of left)
        if (v.every((t) => !left.has(t))) {
          left.delete(k);
          peeled = true;
        }
    }
    expect([...left.keys()]).toEqual([]);
    expect(Object.keys(layers).length).toBeGreaterThan(15);
  });
});

describe('folder-level import cycles', () => {
  it('scripts/check-cycles.mjs prints nothing and exits 0 on the tree', () => {
    const out = execFileSync(process.execPath, ['scripts/check-cycles.mjs'], { cwd: ROOT, encoding: 'utf8' });
    expect(out).toBe('');
  });
});
