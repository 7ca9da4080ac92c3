#!/usr/bin/env node
// Checks docker-compose.yml with the real Compose tool (`docker compose` v2, or Debian's `docker-compose`):
//  1. `config` passes when every required secret is set (placeholders here) and an env file made from
//     config/.env.example is given, and renders both into the replicas;
//  2. `config` fails, naming the variable, when any one of them is missing (secrets are required, no default);
//  3. the rendered file keeps its promises: Redis plus at least two gateway replicas, one published port,
//     health checks, read-only root filesystems, no new privileges, no capabilities, replicas on Redis,
//     /metrics behind its token, and a Prometheus service scraping both replicas.
// Usage: node scripts/check-compose.mjs   (npm run compose:check; .ci/run runs it)
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { upstreamNames } from './docs-config.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const FILE = join(ROOT, 'docker-compose.yml');

/** Secrets and deployment paths the file must refuse to render without. */
const REQUIRED = [
  'ATRIUM_OPERATOR_TOKEN',
  'ATRIUM_METRICS_TOKEN',
  'ATRIUM_LINK_SECRET',
  'REDIS_PASSWORD',
  'POSTGRES_PASSWORD',
  'ATRIUM_CONSUMERS_FILE_HOST',
];
/**
 * Vendor keys travel in the env file (the gateway names a missing one at boot): filled in as an operator
 * would, one per upstream of src/upstreams/index.ts (read from the source: no build needed).
 */
const FROM_ENV_FILE = Object.fromEntries(
  upstreamNames().map((n) => [`UPSTREAM_${n.toUpperCase()}_TOKEN`, `placeholder-${n}-key-0123456789`]),
);

const failures = [];
const check = (ok, what) => {
  if (!ok) failures.push(what);
  console.log(`${ok ? 'ok  ' : 'FAIL'} ${what}`);
};

function findTool() {
  const v2 = spawnSync('docker', ['compose', 'version'], { encoding: 'utf8' });
  if (v2.status === 0) return { cmd: 'docker', pre: ['compose'], json: true, name: 'docker compose' };
  const v1 = spawnSync('docker-compose', ['version'], { encoding: 'utf8' });
  if (v1.status === 0) return { cmd: 'docker-compose', pre: [], json: false, name: 'docker-compose' };
  console.error(
    'Neither `docker compose` nor `docker-compose` is installed (Debian: apt-get install docker-compose).',
  );
  process.exit(2);
}

const tool = findTool();
console.log(`Checking ${FILE} with ${tool.name}`);
// An empty env file: a developer's .env must not satisfy the "required" checks.
const dir = mkdtempSync(join(tmpdir(), 'atrium-compose-'));
const emptyEnv = join(dir, 'empty.env');
writeFileSync(emptyEnv, '');
// The replicas' env file, made from the example as an operator would: every `KEY=` filled where we have a value.
const exampleEnv = join(dir, 'atrium.env');
writeFileSync(
  exampleEnv,
  readFileSync(join(ROOT, 'config/.env.example'), 'utf8').replace(/^([A-Z0-9_]+)=.*$/gm, (line, key) =>
    key in FROM_ENV_FILE ? `${key}=${FROM_ENV_FILE[key]}` : line,
  ),
);

function baseEnv() {
  const env = {};
  for (const [k, v] of Object.entries(process.env))
    if (!REQUIRED.includes(k) && !/^(UPSTREAM_|ATRIUM_|REDIS_|POSTGRES_|DATABASE_|COMPOSE_)/.test(k))
      env[k] = v;
  env.ATRIUM_ENV_FILE = exampleEnv;
  return env;
}
const placeholders = Object.fromEntries(
  REQUIRED.map((k) => [
    k,
    k === 'ATRIUM_CONSUMERS_FILE_HOST'
      ? './config/consumers.example.json'
      : `placeholder-${k.toLowerCase()}-0123456789`,
  ]),
);

function compose(args, env) {
  return spawnSync(tool.cmd, [...tool.pre, '--env-file', emptyEnv, '-f', FILE, ...args], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
  });
}

// 1. Renders with every secret set.
const rendered = compose(['config', ...(tool.json ? ['--format', 'json'] : [])], {
  ...baseEnv(),
  ...placeholders,
});
check(rendered.status === 0, `${tool.name} config passes with every required variable set`);
if (rendered.status !== 0) {
  console.error(rendered.stderr);
  process.exit(1);
}

// 2. Each secret is required.
for (const name of REQUIRED) {
  const env = { ...baseEnv(), ...placeholders };
  delete env[name];
  const r = compose(['config', '-q'], env);
  check(
    r.status !== 0 && `${r.stderr}${r.stdout}`.includes(name),
    `config fails naming ${name} when it is unset`,
  );
}

// 3. Policies, on the rendered (normalised) file.
let doc;
if (tool.json) doc = JSON.parse(rendered.stdout);
else {
  // Debian's docker-compose is Python and brings PyYAML with it.
  const json = execFileSync(
    'python3',
    ['-c', 'import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)'],
    { input: rendered.stdout, encoding: 'utf8' },
  );
  doc = JSON.parse(json);
}
const services = doc.services ?? {};
const names = Object.keys(services);
const gateways = names.filter((n) => services[n].image === 'atrium:local' || services[n].build);
check(names.includes('redis'), 'a redis service');
check(names.includes('postgres'), 'a postgres service');
// State that may not be lost lives in PostgreSQL on a volume; Redis holds only what may be.
const pg = services.postgres ?? {};
check(
  (pg.volumes ?? []).some((v) => (typeof v === 'string' ? v : v.target).includes('/var/lib/postgresql/data')),
  'postgres: its data on a volume',
);
check(
  pg.environment?.POSTGRES_PASSWORD === placeholders.POSTGRES_PASSWORD,
  'postgres: password from the environment',
);
const redisCommand = [].concat(services.redis?.command ?? []).join(' ');
check(/--save ""/.test(redisCommand) && /--appendonly no/.test(redisCommand), 'redis: persists nothing');
check(/--maxmemory-policy allkeys-lru/.test(redisCommand), 'redis: evicts under memory pressure');
check(gateways.length >= 2, `at least two gateway replicas (${gateways.join(', ')})`);

const published = names.filter((n) => (services[n].ports ?? []).length > 0);
check(published.length === 1, `exactly one service publishes ports (${published.join(', ') || 'none'})`);
const lb = services[published[0]] ?? {};
check((lb.ports ?? []).length === 1, 'one published port');
check(
  !published.some((n) => gateways.includes(n)),
  'the replicas are reached only through the load balancer',
);
for (const g of gateways) {
  const depends = Object.keys(lb.depends_on ?? {});
  check(depends.includes(g), `the load balancer waits for ${g}`);
}

for (const n of names) {
  const s = services[n];
  check(Array.isArray(s.healthcheck?.test) || typeof s.healthcheck?.test === 'string', `${n}: health check`);
  check(s.read_only === true, `${n}: read-only root filesystem`);
  check((s.security_opt ?? []).includes('no-new-privileges:true'), `${n}: no-new-privileges`);
  check((s.cap_drop ?? []).includes('ALL'), `${n}: all capabilities dropped`);
}

for (const g of gateways) {
  const env = services[g].environment ?? {};
  check(
    /^rediss?:\/\/[^/]*@?redis:6379/.test(env.REDIS_URL ?? ''),
    `${g}: REDIS_URL points at the redis service`,
  );
  check(env.ATRIUM_SANDBOX === 'off', `${g}: sandbox off`);
  check(
    /^postgres(ql)?:\/\/atrium:[^@]+@postgres:5432\/atrium$/.test(env.DATABASE_URL ?? '') &&
      env.DATABASE_URL.includes(placeholders.POSTGRES_PASSWORD),
    `${g}: DATABASE_URL points at the postgres service, password from the environment`,
  );
  check(Object.keys(services[g].depends_on ?? {}).includes('postgres'), `${g}: waits for postgres`);
  for (const name of ['ATRIUM_OPERATOR_TOKEN', 'ATRIUM_METRICS_TOKEN'])
    check(env[name] === placeholders[name], `${g}: ${name} comes from the environment (required)`);
  for (const [name, value] of Object.entries(FROM_ENV_FILE))
    check(env[name] === value, `${g}: ${name} comes from the env file`);
  check(
    env.UPSTREAM_MACRO_BASE_URL === 'https://api.ceicdata.com/v2',
    `${g}: settings of the example env file reach it (UPSTREAM_MACRO_BASE_URL)`,
  );
  check(
    env.REDIS_PASSWORD === placeholders.REDIS_PASSWORD && !(env.REDIS_URL ?? '').includes('@'),
    `${g}: the Redis password comes from the environment`,
  );
}

const prom = services.prometheus;
check(prom !== undefined, 'a prometheus service');
if (prom) {
  check((prom.ports ?? []).length === 0, 'prometheus: not published');
  check(
    prom.environment?.ATRIUM_METRICS_TOKEN === placeholders.ATRIUM_METRICS_TOKEN,
    'prometheus: has the metrics token',
  );
  const promConfig = readFileSync(join(ROOT, 'config/compose/prometheus.yml'), 'utf8');
  for (const g of gateways) check(promConfig.includes(`'${g}:3000'`), `prometheus scrapes ${g}`);
  check(/credentials_file:/.test(promConfig), 'prometheus sends the metrics token');
}

console.log(failures.length ? `\n${failures.length} compose check(s) failed` : '\ncompose checks passed');
process.exit(failures.length ? 1 : 0);
