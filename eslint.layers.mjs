// The layering of src/, as ESLint `no-restricted-imports` zones (issue 14): dependencies point down.
//   config            imports nothing else of src/
//   core              imports only core/ and config/ (metrics, Redis and docs through core/ports)
//   proxy             imports only proxy/, core/ and config/: no vendor, no metrics, health, docs or Redis module
//   upstreams/<name>  imports no other upstream except upstreams/shared (and upstreams/upstream-declaration.ts)
// Imports are relative, so each zone is written per depth: from a file d folders below src/, `../` d times
// reaches src/, and the next segment must be an allowed folder. scripts/check-cycles.mjs guards the rest.
import { readdirSync } from 'node:fs';
import { join } from 'node:path';

const DEPTHS = [1, 2, 3, 4];
const up = (n) => `(?:\\.\\./){${n}}`;

/** Files `depth` folders below src/ under `dir`: `src/proxy/*.ts` is depth 1, `src/proxy/cache/*.ts` 2. */
function filesAt(dir, depth) {
  const below = depth - dir.split('/').length;
  return [`src/${dir}/${'*/'.repeat(below)}*.ts`];
}

function zone(dir, allowed, message) {
  const first = dir.split('/').length;
  return DEPTHS.filter((d) => d >= first).map((d) => ({
    files: filesAt(dir, d),
    rules: {
      'no-restricted-imports': [
        'error',
        { patterns: [{ regex: `^${up(d)}(?!(?:${allowed.join('|')})/)`, message }] },
      ],
    },
  }));
}

/** Inside upstreams/<name>: climbing to upstreams/ and into anything but shared/ or itself. */
function upstreamZone(name) {
  return [2, 3, 4].map((d) => ({
    files: filesAt(`upstreams/${name}`, d),
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              // shared/, itself, and the declaration contract every upstream fills in.
              regex: `^${up(d - 1)}(?!\\.\\./|shared/|${name}/|upstream-declaration\\.js$)`,
              message: `upstreams/${name} imports no other upstream (only upstreams/shared and the declaration type).`,
            },
          ],
        },
      ],
    },
  }));
}

const upstreams = readdirSync(join(import.meta.dirname, 'src/upstreams'), { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name);

export const layerZones = [
  ...zone('config', ['config'], 'config/ is the bottom layer: it imports nothing else of src/.'),
  ...zone(
    'core',
    ['core', 'config'],
    'core/ imports only core/ and config/ (other layers through core/ports).',
  ),
  ...zone(
    'proxy',
    ['proxy', 'core', 'config'],
    'proxy/ imports only proxy/, core/ and config/: reach metrics, health, docs and Redis through core/ports.',
  ),
  ...upstreams.flatMap(upstreamZone),
];
