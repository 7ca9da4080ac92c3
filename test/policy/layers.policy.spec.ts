import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

// Issue 14 item 3: the layering is enforced by ESLint zones (eslint.layers.mjs, used by eslint.config.mjs)
// and the folder cycle check (scripts/check-cycles.mjs). Putting back an upward import must fail lint; these
// lint snippets as if they were files of each layer. ESLint is ESM-only here, so it runs in a child Node.

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
  { file: 'src/proxy/pipeline.ts', from: '../core/ports/metrics.port.js', restricted: false },
  { file: 'src/proxy/pipeline.ts', from: '../config/atrium-config.js', restricted: false },
  { file: 'src/proxy/stages/cache.stage.ts', from: '../cache/cache-key.js', restricted: false },
  // core: only core and config.
  { file: 'src/core/core.module.ts', from: '../proxy/proxy.service.js', restricted: true },
  { file: 'src/core/throttling/throttling.module.ts', from: '../../redis/redis.module.js', restricted: true },
  {
    file: 'src/core/throttling/throttling.module.ts',
    from: '../../metrics/metrics.module.js',
    restricted: true,
  },
  { file: 'src/core/throttling/throttling.module.ts', from: '../ports/redis.port.js', restricted: false },
  { file: 'src/core/logging/logging.module.ts', from: '../../config/atrium-config.js', restricted: false },
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
];

const SCRIPT = `
import { ESLint } from 'eslint';
import tseslint from 'typescript-eslint';
import { layerZones } from './eslint.layers.mjs';
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
  out.push(r.messages.some((m) => m.ruleId === 'no-restricted-imports'));
}
// The project's own config (what npm run lint uses) carries the zones for each layer.
const wired = [];
for (const f of ['src/proxy/pipeline.ts', 'src/proxy/cache/cache-key.ts', 'src/core/core.module.ts', 'src/upstreams/macro/macro.upstream.ts'])
  wired.push(Boolean((await project.calculateConfigForFile(f)).rules['no-restricted-imports']));
console.log(JSON.stringify({ out, wired }));
`;

describe('layer zones: an upward import fails lint', () => {
  let result: { out: boolean[]; wired: boolean[] };
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

  it('eslint.config.mjs applies the zones to proxy, nested proxy, core and upstream files', () => {
    expect(result.wired).toEqual([true, true, true, true]);
  });
});

describe('folder-level import cycles', () => {
  it('scripts/check-cycles.mjs prints nothing and exits 0 on the tree', () => {
    const out = execFileSync(process.execPath, ['scripts/check-cycles.mjs'], { cwd: ROOT, encoding: 'utf8' });
    expect(out).toBe('');
  });
});
