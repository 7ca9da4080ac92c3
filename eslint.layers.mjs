// The layering of src/ as eslint-plugin-boundaries elements and policies: each top-level folder of src/ is
// an element, and so is each upstream folder; an import from one element into another must be listed in
// LAYERS below (imports within an element are free). The table only points down, so no folder cycle can
// form (test/policy/layers.e2e.spec.ts checks it is acyclic and that the wired config rejects upward
// imports).
import boundaries from 'eslint-plugin-boundaries';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const upstreams = readdirSync(join(import.meta.dirname, 'src/upstreams'), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name);
const vendorUpstreams = upstreams.filter((n) => n !== 'shared');
const upstream = (name) => `upstreams/${name}`;

/** Which elements each element may import: the folder arrows of src/, pointing down. */
export const LAYERS = {
  // The entry points beside main.ts put the application together.
  entry: ['*'],
  config: [],
  core: ['config'],
  // No vendor knowledge: never upstreams/ or sandbox/; metrics, health, docs and Redis through core/ports.
  proxy: ['core', 'config'],
  redis: ['core', 'config'],
  database: ['core', 'config'],
  // The fakes and their wiring; the upstream declarations they start come from the caller.
  sandbox: ['upstream-declaration', 'core', 'config'],
  metrics: ['proxy', 'core', 'config'],
  tracing: ['proxy', 'core', 'config'],
  health: ['proxy', 'core', 'config'],
  admin: ['proxy', 'core', 'config'],
  usage: ['admin', 'database', 'proxy', 'core', 'config'],
  'route-calls': ['metrics', 'usage', 'proxy', 'core', 'config'],
  views: ['route-calls', 'proxy', 'core', 'config'],
  docs: ['views', 'proxy', 'core', 'config'],
  batch: ['route-calls', 'proxy', 'core', 'config'],
  console: ['admin', 'batch', 'health', 'usage', 'views', 'watch', 'proxy', 'core', 'config'],
  watch: ['batch', 'views', 'route-calls', 'usage', 'proxy', 'core', 'config'],
  // The loose files of upstreams/: the index of upstreams, their module and refusal controller.
  upstreams: [...upstreams.map(upstream), 'upstream-declaration', 'proxy', 'core', 'config'],
  // The contract every upstream fills in.
  'upstream-declaration': ['proxy', 'core', 'config'],
  [upstream('shared')]: ['upstream-declaration', 'proxy', 'core', 'config'],
  // An upstream imports no other upstream, only shared/; its declaration loads its sandbox fake.
  ...Object.fromEntries(
    vendorUpstreams.map((n) => [
      upstream(n),
      [upstream('shared'), 'upstream-declaration', 'sandbox', 'docs', 'proxy', 'core', 'config'],
    ]),
  ),
};

const folders = readdirSync(join(import.meta.dirname, 'src'), { withFileTypes: true })
  .filter((e) => e.isDirectory() && e.name !== 'upstreams')
  .map((e) => e.name);

// The first descriptor that matches a file gives its element.
const elements = [
  ...upstreams.map((n) => ({ type: upstream(n), pattern: `src/upstreams/${n}` })),
  { type: 'upstream-declaration', pattern: 'src/upstreams/upstream-declaration.ts', mode: 'file' },
  { type: 'upstreams', pattern: 'src/upstreams/*.ts', mode: 'file' },
  ...folders.map((f) => ({ type: f, pattern: `src/${f}` })),
  { type: 'entry', pattern: 'src/*.ts', mode: 'file' },
];

const all = Object.keys(LAYERS);

export const layerZones = [
  {
    files: ['src/**/*.ts'],
    plugins: { boundaries },
    settings: {
      'boundaries/elements': elements,
      // The loose files of upstreams/ and src/ are elements of their own through `mode: 'file'`, which
      // version 7 still honours but reports as deprecated on every run; kept quiet until the file
      // descriptors replace it.
      'boundaries/legacy-warnings': false,
      // Imports end in `.js` and name `.ts` files: TypeScript's own resolution.
      'import/resolver': { typescript: { project: join(import.meta.dirname, 'tsconfig.json') } },
    },
    rules: {
      'boundaries/dependencies': [
        'error',
        {
          default: 'disallow',
          policies: [
            { allow: { to: { module: { origin: 'external' } } } },
            { allow: { to: { module: { origin: 'core' } } } },
            ...Object.entries(LAYERS).map(([from, to]) => ({
              from: { element: { type: from } },
              allow: {
                to: { element: { types: { anyOf: [from, ...(to[0] === '*' ? all : to)] } } },
              },
            })),
          ],
        },
      ],
    },
  },
];
