import { getMetadataStorage } from 'class-validator';
import type { Env } from './env-check.js';

/**
 * Variables of the `ATRIUM_` namespace read by the repository's tools rather than by the gateway (compose,
 * CI, the test tiers, the soak): present in a gateway's environment without being a mistake.
 */
const TOOL_VARIABLES = [
  'ATRIUM_CONFIG_STRICT',
  'ATRIUM_DEMO_KEY',
  'ATRIUM_PORT',
  'ATRIUM_ENV_FILE',
  'ATRIUM_CONSUMERS_FILE_HOST',
  'ATRIUM_REQUIRE_REDIS',
  'ATRIUM_LOG_CAPTURE_DIR',
  'ATRIUM_LOG_CAPTURE_OWNED',
  'ATRIUM_HARDENING_OUT',
  'ATRIUM_HARDENING_RESULTS_DIR',
  'ATRIUM_SCREENSHOTS',
  'ATRIUM_SOAK_PROBE',
  'ATRIUM_CHROMIUM',
];

/** The variables a validated class reads (every field carries a class-validator rule). */
export function variablesOf(cls: new () => object): string[] {
  return [
    ...new Set(
      getMetadataStorage()
        .getTargetValidationMetadatas(cls, '', true, false)
        .map((m) => m.propertyName),
    ),
  ];
}

/** Edit distance (insertions, deletions, substitutions), for "did you mean". */
function distance(a: string, b: string): number {
  const row = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    let diagonal = row[0];
    row[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = row[j];
      row[j] = Math.min(row[j] + 1, row[j - 1] + 1, diagonal + (a[i - 1] === b[j - 1] ? 0 : 1));
      diagonal = above;
    }
  }
  return row[b.length];
}

/** The nearest known name, when it is near enough to be what was meant. */
export function nearest(name: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Infinity;
  for (const k of known) {
    const d = distance(name, k);
    if (d < bestDistance) [best, bestDistance] = [k, d];
  }
  return bestDistance <= Math.max(2, Math.floor(name.length / 4)) ? best : undefined;
}

/**
 * `ATRIUM_*` and `UPSTREAM_*` variables the gateway does not read (a misspelling is otherwise ignored
 * without a word), each with the nearest known name when there is one. `known` lists every variable read.
 */
export function unknownVariables(env: Env, known: readonly string[]): string[] {
  const all = [...known, ...TOOL_VARIABLES];
  const set = new Set(all);
  return Object.keys(env)
    .filter((k) => /^(ATRIUM|UPSTREAM)_/.test(k) && !set.has(k))
    .sort()
    .map((k) => {
      const near = nearest(k, all);
      return near ? `${k} (unknown; did you mean ${near}?)` : `${k} (unknown)`;
    });
}
