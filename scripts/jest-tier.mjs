#!/usr/bin/env node
// Runs one test tier (a Jest project): `node scripts/jest-tier.mjs <tier> [jest args and paths]`.
// The tier goes last: `--selectProjects` takes every word after it as a project name, so a path given
// after it (`npm run test:unit -- test/policy`) would be read as one and the whole tier would run.
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const [tier, ...args] = process.argv.slice(2);
if (!tier) {
  console.error('usage: node scripts/jest-tier.mjs <tier> [jest args]');
  process.exit(2);
}
const jest = join(dirname(fileURLToPath(import.meta.url)), '../node_modules/jest/bin/jest.js');
// Several tiers at once: `hardening,fleet,postgres`.
const r = spawnSync(process.execPath, [jest, ...args, '--selectProjects', ...tier.split(',')], {
  stdio: 'inherit',
  // The global hooks read which tiers run (the hardening summary is written only for its own run).
  env: { ...process.env, JEST_TIERS: tier },
});
process.exit(r.status ?? 1);
