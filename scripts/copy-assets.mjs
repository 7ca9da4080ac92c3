#!/usr/bin/env node
// Part of `npm run build`: tsc emits only JavaScript, so the non-TypeScript files the gateway reads at run
// time are copied from src/ to the same place under dist/ (each folder replaced whole: no stale file stays).
import { cpSync, rmSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ASSET_DIRS = ['console/assets', 'database/migrations'];

for (const dir of ASSET_DIRS) {
  const target = join(root, 'dist', dir);
  rmSync(target, { recursive: true, force: true });
  cpSync(join(root, 'src', dir), target, { recursive: true });
}
