#!/usr/bin/env node
// Bytes on the wire for the sandbox's company page and series screen, as direct calls and as views, without
// compression, with gzip and with brotli (docs/frontend.md "Compression"), and what compressing an answer
// again on every cache hit costs. Against a running sandbox (`npm start`):
//   ATRIUM_URL=http://127.0.0.1:3000 ATRIUM_KEY=<demo key> node scripts/measure-wire-bytes.mjs
import { performance } from 'node:perf_hooks';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { request } from 'undici';

const BASE = process.env.ATRIUM_URL ?? 'http://127.0.0.1:3000';
const KEY = process.env.ATRIUM_KEY;
if (!KEY) {
  console.error('ATRIUM_KEY is required (the demo key the sandbox prints).');
  process.exit(2);
}
const ENCODINGS = ['identity', 'gzip', 'br'];

/** One GET; the body's bytes as they came over the wire (undici does not decode them). */
async function get(path, encoding) {
  const res = await request(BASE + path, {
    headers: { authorization: `Bearer ${KEY}`, 'accept-encoding': encoding },
  });
  const body = Buffer.from(await res.body.arrayBuffer());
  // The demo consumer's quota (50 a second): wait for the window, then ask again.
  if (res.statusCode === 429) {
    await new Promise((r) => setTimeout(r, 1000 * Number(res.headers['retry-after'] ?? 1)));
    return get(path, encoding);
  }
  if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${body.toString().slice(0, 200)}`);
  return { body, encoding: res.headers['content-encoding'] ?? 'identity' };
}

async function bytes(paths) {
  const out = {};
  for (const e of ENCODINGS) {
    out[e] = 0;
    // Twice: the first call fills the cache, the second is the hit a polling page gets.
    for (const p of paths) await get(p, e);
    for (const p of paths) out[e] += (await get(p, e)).body.length;
  }
  return out;
}

const company = JSON.parse((await get('/views/company-overview?id=1000037', 'identity')).body).data;
const statementId = company.statement?.data?.items?.[0]?.statementId;
const name = company.company.data.items[0].companyName;
const companyDirect = [
  '/company/companies/1000037',
  '/company/companies/1000037/statements?year=2023&limit=1',
  `/company/companies/statements/${statementId}/accounts`,
  `/documents/Search/query/?term=${encodeURIComponent(name)}&limit=5`,
  '/deals/SearchDeal/getDeals/?companies%5B0%5D=1000037&limit=5',
];
const SERIES_FIELDS =
  'data.data[].timePoints[].date,data.data[].timePoints[].value,metadata.data[].metadata.name,releases.data[].releases[].releaseDate';
const rows = [
  ['company page, five direct calls', companyDirect],
  ['company-overview view', ['/views/company-overview?id=1000037']],
  [
    'series screen, three direct calls',
    ['/macro/series/310112/data', '/macro/series/310112/metadata', '/macro/releases/series/310112'],
  ],
  ['series-overview view', ['/views/series-overview?id=310112']],
  ['series-overview view, fields=', [`/views/series-overview?id=310112&fields=${SERIES_FIELDS}`]],
];
console.log('screen | identity | gzip | br');
for (const [label, paths] of rows) {
  const b = await bytes(paths);
  const pct = (n) => `${n} (−${Math.round((1 - n / b.identity) * 100)} %)`;
  console.log(`${label} | ${b.identity} | ${pct(b.gzip)} | ${pct(b.br)}`);
}

// Compressing on every hit: the cost per answer, as @fastify/compress does it (gzip level 6, brotli quality 4).
const sample = [...companyDirect, '/macro/series/310112/data', '/views/company-overview?id=1000037'];
const bodies = await Promise.all(sample.map(async (p) => (await get(p, 'identity')).body));
const total = bodies.reduce((n, b) => n + b.length, 0);
for (const [label, fn] of [
  ['gzip', (b) => gzipSync(b)],
  ['br q4', (b) => brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: 4 } })],
]) {
  const rounds = 500;
  for (const b of bodies) fn(b);
  const t0 = performance.now();
  for (let i = 0; i < rounds; i++) for (const b of bodies) fn(b);
  const us = ((performance.now() - t0) * 1000) / (rounds * bodies.length);
  console.log(
    `${label}: ${us.toFixed(0)} µs per answer (mean body ${Math.round(total / bodies.length)} bytes)`,
  );
}
