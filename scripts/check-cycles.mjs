#!/usr/bin/env node
// Fails on any folder-level import cycle in src/: folder A imports folder B (any file of A imports any file
// of B, type-only imports included) and B reaches A again. Silent when there is none. `--graph` prints every
// folder-level arrow instead (for reading the layering, not for CI).
//
// A folder is a top-level folder of src/ with everything below it (`proxy` includes `proxy/cache`), except
// that `upstreams/` is a shelf of independent units: one per upstream folder (`upstreams/macro`,
// `upstreams/shared`) and one per file directly in it (`upstreams/index`, `upstreams/upstream-declaration`).
// Files directly in src/ (main, app module) are `.`.
import { readdirSync, readFileSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');

function* tsFiles(dir) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, e.name);
    if (e.isDirectory()) yield* tsFiles(p);
    else if (e.name.endsWith('.ts') && !e.name.endsWith('.d.ts')) yield p;
  }
}

// TypeScript's own parser: static imports, re-exports and dynamic imports; never text inside a string.
function importsOf(file) {
  const sf = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, false);
  const out = [];
  const visit = (node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier)
      out.push(node.moduleSpecifier.text);
    else if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    )
      out.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(sf);
  return out.filter((name) => name.startsWith('.'));
}

const SHELVES = new Set(['upstreams']);
const folderOf = (file) => {
  const parts = relative(src, dirname(file)).split(/[\\/]/).filter(Boolean);
  if (parts.length === 0) return '.';
  if (!SHELVES.has(parts[0])) return parts[0];
  // On a shelf, each folder is a unit, and so is each loose file (index.ts, the declaration contract).
  return parts.length > 1 ? `${parts[0]}/${parts[1]}` : `${parts[0]}/${basename(file, '.ts')}`;
};

const edges = new Map(); // folder -> Map(folder -> example "file -> file")
for (const file of tsFiles(src)) {
  const from = folderOf(file);
  for (const spec of importsOf(file)) {
    const target = resolve(dirname(file), spec);
    if (!target.startsWith(src)) continue;
    const to = folderOf(target.replace(/\.js$/, '.ts'));
    if (to === from) continue;
    if (!edges.has(from)) edges.set(from, new Map());
    if (!edges.get(from).has(to)) edges.get(from).set(to, `${relative(root, file)} -> ${spec}`);
  }
}

if (process.argv.includes('--graph')) {
  for (const [from, tos] of [...edges].sort())
    for (const [to, why] of [...tos].sort()) console.log(`${from} -> ${to}    (${why})`);
  process.exit(0);
}

// Tarjan's strongly connected components: every component of two or more folders is a cycle.
let index = 0;
const idx = new Map();
const low = new Map();
const stack = [];
const onStack = new Set();
const cycles = [];
const folders = new Set([...edges.keys(), ...[...edges.values()].flatMap((m) => [...m.keys()])]);
function visit(v) {
  idx.set(v, index);
  low.set(v, index++);
  stack.push(v);
  onStack.add(v);
  for (const w of edges.get(v)?.keys() ?? []) {
    if (!idx.has(w)) {
      visit(w);
      low.set(v, Math.min(low.get(v), low.get(w)));
    } else if (onStack.has(w)) low.set(v, Math.min(low.get(v), idx.get(w)));
  }
  if (low.get(v) === idx.get(v)) {
    const scc = [];
    let w;
    do {
      w = stack.pop();
      onStack.delete(w);
      scc.push(w);
    } while (w !== v);
    if (scc.length > 1) cycles.push(scc.sort());
  }
}
for (const f of [...folders].sort()) if (!idx.has(f)) visit(f);

if (cycles.length > 0) {
  for (const scc of cycles) {
    const inside = new Set(scc);
    console.error(`import cycle between folders of src/: ${scc.join(', ')}`);
    for (const from of scc)
      for (const [to, why] of edges.get(from) ?? [])
        if (inside.has(to)) console.error(`  ${from} -> ${to}  (${why})`);
  }
  process.exit(1);
}
