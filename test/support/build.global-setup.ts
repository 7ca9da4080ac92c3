import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, resolve } from 'node:path';

// Self-contained: Jest loads global setup files without the module name mapping the suites use.
const ROOT = resolve(__dirname, '../..');

function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(p) : statSync(p).mtimeMs);
  }
  return newest;
}

function mtimeOf(file: string): number {
  try {
    return statSync(join(ROOT, file)).mtimeMs;
  } catch {
    return 0;
  }
}

function build(what: string, project: string): void {
  process.stdout.write(`\n[test setup] building ${what} (missing or older than its sources)\n`);
  execFileSync(process.execPath, [join(ROOT, 'node_modules/typescript/bin/tsc'), '-p', project], {
    cwd: ROOT,
    stdio: 'inherit',
  });
}

/**
 * Global setup of the tiers that spawn `node dist/main.js` (and of the bench smoke, which also runs
 * dist-bench/): builds what is missing or stale once per run, in one process, before any test — never
 * inside a test, where two workers could rebuild dist/ at once. Jest runs one global setup module once even
 * when several selected tiers name it, so the bench is built whenever its tier may run.
 */
export default function globalSetup(global: { selectProjects?: string[] }): void {
  const src = newestMtime(join(ROOT, 'src'));
  if (mtimeOf('dist/main.js') < src) {
    build('dist/', 'tsconfig.build.json');
    // The rest of `npm run build`: the files the gateway reads at run time (the console's assets).
    execFileSync(process.execPath, [join(ROOT, 'scripts/copy-assets.mjs')], { cwd: ROOT, stdio: 'inherit' });
  }
  if (!global.selectProjects || global.selectProjects.includes('bench-smoke')) {
    const sources = Math.max(src, newestMtime(join(ROOT, 'bench')));
    if (mtimeOf('dist-bench/bench/run.js') < sources) build('dist-bench/', 'bench/tsconfig.json');
  }
}
