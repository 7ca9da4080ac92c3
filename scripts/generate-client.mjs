#!/usr/bin/env node
// `npm run client:generate`: builds the gateway (npm script), then writes the OpenAPI document and the typed
// front-end client under client/generated/ from the routed application (types by openapi-typescript),
// without starting a server.
// Usage: node scripts/generate-client.mjs [outDir]   (default: client/)
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const outDir = resolve(process.argv[2] ?? join(root, 'client'));

const { createDocumentApp } = await import(join(root, 'dist/document-app.js'));
const { buildOpenApiDocument } = await import(join(root, 'dist/docs/openapi.document.js'));
const { generateClient } = await import(join(root, 'dist/docs/client-generator.js'));

const app = await createDocumentApp();
try {
  const doc = buildOpenApiDocument(app);
  for (const file of await generateClient(doc)) {
    const target = join(outDir, file.path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, file.content);
    console.log(`wrote ${target}`);
  }
  console.log(`${Object.keys(doc.paths).length} paths`);
} finally {
  await app.close();
}
