#!/usr/bin/env node
// What a batch item costs compared with the same request sent on its own: gateway CPU µs per request
// (utime + stime of the gateway process, shared/design/dependencies.md §8), fake upstream in its own
// process, loopback only, bounded loops. Run after `npm run build`:  node scripts/measure-batch.mjs
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const REQUESTS = Number(process.env.REQUESTS ?? 2000);
const ITEMS = 20;
const PATHS = ['/macro/dictionary/units', '/macro/feeds?limit=2', '/macro/layout/tables/TB1207'];

function cpuSeconds(pid) {
  const f = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1].split(' ');
  return (Number(f[11]) + Number(f[12])) / 100;
}

function start(args, env, pattern) {
  const child = spawn(process.execPath, args, { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  return new Promise((res, rej) => {
    const timer = setTimeout(() => rej(new Error(`no start: ${out}`)), 20_000);
    const onData = (d) => {
      out += d;
      const m = pattern.exec(out);
      if (m) {
        clearTimeout(timer);
        res({ child, match: m });
      }
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', (d) => (out += d));
    child.once('exit', (c) => rej(new Error(`exited ${c}: ${out}`)));
  });
}

const token = `sbx_measure_${randomBytes(8).toString('hex')}`;
const fake = await start(
  ['dist/fake-upstream.main.js', '--kind', 'macro', '--token', token],
  process.env,
  /\{.*\}\n/,
);
const fakeUrl = JSON.parse(fake.match[0]).url;
const key = `atr_measure_${randomBytes(18).toString('base64url')}`;
const dir = mkdtempSync(join(tmpdir(), 'atrium-measure-'));
writeFileSync(
  join(dir, 'consumers.json'),
  JSON.stringify({
    consumers: [
      {
        id: 'measure',
        keyHashes: [createHash('sha256').update(key).digest('hex')],
        upstreams: ['macro'],
        limits: [{ name: 'per-second', ttlMs: 1000, limit: 1_000_000 }],
      },
    ],
  }),
);
const env = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  PORT: '0',
  HOST: '127.0.0.1',
  LOG_LEVEL: 'info',
  ATRIUM_SANDBOX: 'off',
  // Only the interface measured is served: the others need no settings.
  ATRIUM_UPSTREAMS: 'macro',
  ATRIUM_CONSUMERS_FILE: join(dir, 'consumers.json'),
  UPSTREAM_MACRO_BASE_URL: fakeUrl,
  UPSTREAM_MACRO_TOKEN: token,
  UPSTREAM_MACRO_RATE_PER_SEC: '100000',
  UPSTREAM_MACRO_BURST: '100000',
};
const gw = await start(['dist/main.js'], env, /listening on (?:port )?(?:http:\/\/[\d.]+:)?(\d+)/);
const base = `http://127.0.0.1:${gw.match[1]}`;
const pool = new Pool(base, { connections: 20 });
const headers = { authorization: `Bearer ${key}` };

async function direct(n) {
  let next = 0;
  await Promise.all(
    Array.from({ length: 20 }, async () => {
      while (next < n) {
        const p = PATHS[next++ % PATHS.length];
        const r = await pool.request({ method: 'GET', path: p, headers });
        await r.body.arrayBuffer();
        if (r.statusCode !== 200) throw new Error(`direct ${p}: ${r.statusCode}`);
      }
    }),
  );
}
const batchBody = JSON.stringify({
  requests: Array.from({ length: ITEMS }, (_, i) => ({ path: PATHS[i % PATHS.length] })),
});
async function batched(n) {
  let next = 0;
  await Promise.all(
    Array.from({ length: 2 }, async () => {
      while (next < n / ITEMS) {
        next++;
        const r = await pool.request({
          method: 'POST',
          path: '/batch',
          headers: { ...headers, 'content-type': 'application/json' },
          body: batchBody,
        });
        const body = JSON.parse(await r.body.text());
        if (r.statusCode !== 200 || body.items.some((i) => i.status !== 200)) throw new Error('batch failed');
      }
    }),
  );
}

async function measure(fn) {
  const c0 = cpuSeconds(gw.child.pid);
  const t0 = performance.now();
  await fn(REQUESTS);
  return { us: ((cpuSeconds(gw.child.pid) - c0) * 1e6) / REQUESTS, ms: performance.now() - t0 };
}

await direct(600);
await batched(600);
const res = { direct: [], batched: [] };
for (let r = 0; r < ROUNDS; r++) {
  res.direct.push(await measure(direct));
  await new Promise((s) => setTimeout(s, 500));
  res.batched.push(await measure(batched));
  await new Promise((s) => setTimeout(s, 500));
}
const median = (a) => a.map((x) => x.us).sort((x, y) => x - y)[Math.floor(a.length / 2)];
console.log(JSON.stringify(res));
console.log(
  `CPU: ${cpus()[0]?.model ?? 'unknown'}; ${ROUNDS} interleaved rounds of ${REQUESTS} requests each`,
);
console.log(`direct GET, keep-alive, 20 in flight : ${median(res.direct).toFixed(0)} gateway CPU µs/request`);
console.log(
  `POST /batch of ${ITEMS} (fastify.inject)    : ${median(res.batched).toFixed(0)} gateway CPU µs/item`,
);
await pool.close();
gw.child.kill('SIGTERM');
fake.child.kill('SIGTERM');
