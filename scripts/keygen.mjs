#!/usr/bin/env node
// Prints a fresh consumer key and a complete consumers-file entry for it: the command of src/keygen.ts (its
// options are listed there), run from dist/ so that it accepts the interfaces of src/upstreams/index.ts.
// `npm run keygen -- <consumer-id> [options]` builds dist/ first when it is stale.
import 'reflect-metadata';
import { existsSync } from 'node:fs';

const built = new URL('../dist/keygen.js', import.meta.url);
if (!existsSync(built)) {
  process.stderr.write('keygen: dist/ is not built (npm run keygen builds it; or npm run build)\n');
  process.exit(2);
}
const { keygen } = await import(built.href);
const r = keygen(process.argv.slice(2));
process.stdout.write(r.stdout);
process.stderr.write(r.stderr);
process.exitCode = r.status;
