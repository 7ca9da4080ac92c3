import { spawnSync } from 'node:child_process';
import {
  appendFileSync,
  existsSync,
  linkSync,
  readdirSync,
  readFileSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { findNginx } from '../../bench/lib/nginx.js';

/**
 * System parts some tests need beyond `npm ci`. A suite that needs one is declared with describeNeeding:
 * when the part is there the suite runs; when it is missing and its require flag is set
 * (ATRIUM_REQUIRE_<PART>=1, which .ci/run sets for every part) the suite fails naming the part; when it is
 * missing elsewhere the suite is skipped, announced by one loud line per run and listed in the summary that
 * ends the run (test/support/system-parts.reporter.cjs).
 */
interface SystemPart {
  /** Names the part in the skip line, the failure and the summary. */
  what: string;
  /** How to get it on the project's machines (Debian). */
  install: string;
  /** Why it is missing, or undefined when it is there. Synchronous: Jest decides skips while it collects tests. */
  missing(): string | undefined;
}

/** The Redis the Redis-backed tests use: REDIS_URL, else 127.0.0.1:6379. */
export const TEST_REDIS_URL = process.env.REDIS_URL || 'redis://127.0.0.1:6379';
/** The PostgreSQL server the database tests use: TEST_POSTGRES_URL, else the local one (trust auth). */
export const TEST_POSTGRES_URL =
  process.env.TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/postgres';
/** Debian's chromium (never a downloaded browser); ATRIUM_CHROMIUM points elsewhere. */
export const CHROMIUM_PATH = process.env.ATRIUM_CHROMIUM ?? '/usr/bin/chromium';

/** The pinned helm: ATRIUM_HELM, else where `npm run helm:install` puts it (node_modules/.cache/atrium-helm). */
export function helmPath(): string | undefined {
  if (process.env.ATRIUM_HELM)
    return existsSync(process.env.ATRIUM_HELM) ? process.env.ATRIUM_HELM : undefined;
  const dir = join(__dirname, '..', '..', 'node_modules', '.cache', 'atrium-helm');
  const found = existsSync(dir) ? readdirSync(dir).find((f) => /^helm-v[0-9.]+$/.test(f)) : undefined;
  return found ? join(dir, found) : undefined;
}

/** Whether a TCP server at `url` answers `hello` (hex) with bytes matching `reply`, within 2 s. */
function answers(url: string, defaultPort: number, hello: string, reply: RegExp): boolean {
  const u = new URL(url);
  const script = `
    const s = require('node:net').connect(${Number(u.port || defaultPort)}, ${JSON.stringify(u.hostname)});
    s.on('connect', () => s.write(Buffer.from(${JSON.stringify(hello)}, 'hex')));
    s.on('data', (d) => process.exit(${reply.toString()}.test(d.toString('latin1')) ? 0 : 1));
    s.on('error', () => process.exit(1));
    setTimeout(() => process.exit(1), 2000);`;
  // Generous: probed once per run, and a loaded machine is slow to start a process.
  return spawnSync(process.execPath, ['-e', script], { timeout: 10_000 }).status === 0;
}

/** Whether `command args` runs and exits 0 (a binary on the PATH). */
function runs(command: string, args: string[]): boolean {
  return spawnSync(command, args, { stdio: 'ignore', timeout: 10_000 }).status === 0;
}

/**
 * Why the tests cannot use the PostgreSQL server at `url`, or undefined when they can: a server that answers
 * but refuses the tests' login (a fresh install asks for a password) is named as such, not as missing.
 */
export function postgresMissing(url: string): string | undefined {
  const script = `
    const { Client } = require(${JSON.stringify(require.resolve('pg'))});
    const c = new Client({ connectionString: process.env.PROBE_URL, connectionTimeoutMillis: 5000 });
    c.connect().then(() => c.query('SELECT 1')).then(
      () => process.exit(0),
      (e) => { process.stdout.write(/^ECONN|timeout/i.test(e.code || e.message) ? '' : e.message); process.exit(1); });`;
  const r = spawnSync(process.execPath, ['-e', script], {
    env: { ...process.env, PROBE_URL: url },
    encoding: 'utf8',
    timeout: 10_000,
  });
  if (r.status === 0) return undefined;
  const host = new URL(url).host;
  return r.stdout
    ? `PostgreSQL at ${host} refused the tests: ${r.stdout}`
    : `no PostgreSQL answer at ${host}`;
}

export const SYSTEM_PARTS = {
  chromium: {
    what: 'Chromium',
    install: 'apt-get install chromium (or set ATRIUM_CHROMIUM to a chromium binary)',
    missing: () => (existsSync(CHROMIUM_PATH) ? undefined : `not found at ${CHROMIUM_PATH}`),
  },
  redis: {
    what: 'a Redis server',
    install: 'apt-get install redis-server and start it, or set REDIS_URL',
    missing: () =>
      answers(TEST_REDIS_URL, 6379, Buffer.from('PING\r\n').toString('hex'), /^\+PONG/)
        ? undefined
        : `no answer to PING at ${TEST_REDIS_URL}`,
  },
  'redis-server': {
    what: 'the redis-server binary',
    install: 'apt-get install redis-server',
    missing: () => (runs('redis-server', ['--version']) ? undefined : 'not on the PATH'),
  },
  nginx: {
    what: 'nginx',
    install: 'apt-get install nginx-light',
    // Found as the bench finds it (nginx on the PATH or Debian's /usr/sbin/nginx, outside a user's PATH); the
    // bench smoke drops BENCH_NGINX, so it is not consulted here either.
    missing: () => (findNginx({}).bin ? undefined : 'neither nginx on the PATH nor /usr/sbin/nginx'),
  },
  curl: {
    what: 'curl',
    install: 'apt-get install curl',
    missing: () => (runs('curl', ['--version']) ? undefined : 'not on the PATH'),
  },
  helm: {
    what: 'helm',
    install: 'npm run helm:install (or set ATRIUM_HELM to a helm binary)',
    missing: () => (helmPath() ? undefined : `not found (ATRIUM_HELM or node_modules/.cache/atrium-helm)`),
  },
  postgres: {
    what: 'a PostgreSQL server',
    install:
      'apt-get install postgresql and start it, letting postgres in from 127.0.0.1 without a password (trust in pg_hba.conf), or set TEST_POSTGRES_URL',
    missing: () => postgresMissing(TEST_POSTGRES_URL),
  },
} as const satisfies Record<string, SystemPart>;

export type SystemPartName = keyof typeof SYSTEM_PARTS;

/** The variable that turns a missing part into a failure: ATRIUM_REQUIRE_CHROMIUM, ATRIUM_REQUIRE_REDIS_SERVER, … */
export function requireFlag(part: SystemPartName): string {
  return `ATRIUM_REQUIRE_${part.toUpperCase().replace(/-/g, '_')}`;
}

/** The run's journal (a directory the reporter names): one verdict file per part probed, and skips.jsonl. */
const JOURNAL_ENV = 'ATRIUM_SYSTEM_PARTS_DIR';
const verdicts = new Map<SystemPartName, string | null>();

/**
 * Why `part` is missing (null when it is there), probed once per run: the first suite to ask publishes the
 * verdict in the journal (a hard link, so exactly one writer wins) and announces a missing part; later suites
 * in any worker read it.
 */
function verdictOf(part: SystemPartName): { missing: string | null; first: boolean } {
  const known = verdicts.get(part);
  if (known !== undefined) return { missing: known, first: false };
  const dir = process.env[JOURNAL_ENV];
  const file = dir && join(dir, `${part}.json`);
  if (file && existsSync(file)) {
    const missing = (JSON.parse(readFileSync(file, 'utf8')) as { missing: string | null }).missing;
    verdicts.set(part, missing);
    return { missing, first: false };
  }
  const missing = SYSTEM_PARTS[part].missing() ?? null;
  verdicts.set(part, missing);
  if (!file) return { missing, first: true };
  const tmp = `${file}.${process.pid}`;
  writeFileSync(
    tmp,
    JSON.stringify({ part, what: SYSTEM_PARTS[part].what, missing, install: SYSTEM_PARTS[part].install }),
  );
  try {
    linkSync(tmp, file);
    return { missing, first: true };
  } catch {
    return { missing, first: false };
  } finally {
    unlinkSync(tmp);
  }
}

/**
 * A describe block whose tests need `part`. Missing, it fails under the part's require flag (CI) and is
 * skipped elsewhere: announced once, listed at the end of the run, never silently.
 */
export function describeNeeding(part: SystemPartName, name: string, fn: () => void): void {
  const { missing, first } = verdictOf(part);
  if (missing === null) {
    describe(name, fn);
    return;
  }
  const { what, install } = SYSTEM_PARTS[part];
  const flag = requireFlag(part);
  if (process.env[flag] === '1') {
    describe(name, () => {
      it(`needs ${what}`, () => {
        throw new Error(`${what} is required (${flag}=1) but ${missing}: ${install}`);
      });
    });
    return;
  }
  if (first)
    process.stderr.write(
      `\n*** SKIPPING every test that needs ${what} (${missing}); to run them: ${install} ***\n`,
    );
  const dir = process.env[JOURNAL_ENV];
  if (dir)
    appendFileSync(
      join(dir, 'skips.jsonl'),
      JSON.stringify({ part, file: expect.getState().testPath, suite: name }) + '\n',
    );
  // Skipped only off CI, announced above and in the run's summary; under the require flag it fails instead.
  describe.skip(name, fn);
}
