#!/usr/bin/env node
// `npm start`'s prestart (and `npm run keygen`'s): builds dist/ only when it is missing or older than what it is built from (src/,
// the build's tsconfig files, the lockfile), as the test tiers' global setup does. A start with nothing
// changed goes straight to `node dist/main.js` instead of a full tsc run. It reports on stderr: stdout
// belongs to the command it precedes (`npm run keygen -- --json`).
import { execFileSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

function newest(path) {
  let s;
  try {
    s = statSync(path);
  } catch {
    return 0;
  }
  if (!s.isDirectory()) return s.mtimeMs;
  let n = 0;
  for (const e of readdirSync(path)) n = Math.max(n, newest(join(path, e)));
  return n;
}

const sources = Math.max(
  ...['src', 'tsconfig.json', 'tsconfig.build.json', 'package-lock.json', 'scripts/copy-assets.mjs'].map(
    (p) => newest(join(root, p)),
  ),
);
const built = newest(join(root, 'dist/main.js'));
if (built >= sources) {
  process.stderr.write('dist/ is up to date: not rebuilt\n');
} else {
  process.stderr.write('dist/ is missing or older than src/: building\n');
  const npm = process.env.npm_execpath;
  if (npm)
    execFileSync(process.execPath, [npm, 'run', 'build'], { cwd: root, stdio: ['inherit', 2, 'inherit'] });
  else execFileSync('npm', ['run', 'build'], { cwd: root, stdio: ['inherit', 2, 'inherit'] });
}
