import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { toRecord } from '../../src/core/auth/consumer-record.js';
import type { Consumer } from '../../src/core/auth/consumer.js';
import { recordEnvSecrets, teeSpawnedOutput } from '../observability/log-capture.js';

const ROOT = resolve(__dirname, '../..');

/** The tiers that spawn gateways build dist/ in their global setup (test/support/build.global-setup.ts). */
export function assertBuilt(): void {
  if (!existsSync(join(ROOT, 'dist/main.js')))
    throw new Error(
      'dist/main.js is missing: this tier builds it in its global setup (or run npm run build)',
    );
}

export interface SpawnedGateway {
  child: ChildProcess;
  url: string;
  output: () => string;
  stop(): Promise<number | null>;
}

/** The link secret of test fleets sharing Redis that set none. */
export const TEST_LINK_SECRET = 'test-fleet-link-secret-0123456789abcdef';

/** Environment without anything that would configure the gateway, so a test states all it needs. */
export function cleanEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env))
    if (!/^(UPSTREAM_|ATRIUM_|REDIS_URL$|PORT$|HOST$|LOG_LEVEL$)/.test(k)) env[k] = v;
  // No drain delay after SIGTERM unless a test asks for one (test/fleet/rolling-restart.fleet.spec.ts).
  // Replicas sharing Redis need one link secret (the boot stops without it).
  const link = extra.REDIS_URL && !extra.ATRIUM_LINK_SECRET ? { ATRIUM_LINK_SECRET: TEST_LINK_SECRET } : {};
  return { ...env, ATRIUM_DRAIN_DELAY_MS: '0', ...link, ...extra };
}

/** A consumers file for spawned gateways, keys as SHA-256 hex as in production. */
export function writeConsumersFile(dir: string, consumers: readonly Consumer[]): string {
  const path = join(dir, 'consumers.json');
  const doc = {
    consumers: consumers.map((c) => ({
      id: c.id,
      keyHashes: c.keyHashes.map((h) => h.toString('hex')),
      upstreams: [...c.upstreams],
      write: c.write,
      limits: c.limits,
      weight: c.weight,
      reservedShare: c.reservedShare,
      corsOrigins: c.corsOrigins,
      ...(c.tokens ? { oidc: toRecord(c).oidc } : {}),
    })),
  };
  writeFileSync(path, JSON.stringify(doc));
  return path;
}

/**
 * A replica serving only the macro interface from the fake at `baseUrl`, to these consumers (a file in
 * `dir`), on a free loopback port, sandbox off: a fleet test adds what it exercises.
 */
export function macroReplicaEnv(
  o: { dir: string; consumers: readonly Consumer[]; baseUrl: string },
  extra: Record<string, string>,
): NodeJS.ProcessEnv {
  return cleanEnv({
    PORT: '0',
    HOST: '127.0.0.1',
    ATRIUM_SANDBOX: 'off',
    ATRIUM_UPSTREAMS: 'macro',
    ATRIUM_CONSUMERS_FILE: writeConsumersFile(o.dir, o.consumers),
    UPSTREAM_MACRO_BASE_URL: o.baseUrl,
    ...extra,
  });
}

/** Starts `node dist/main.js` and waits until it prints its listening line. */
export function spawnGateway(env: NodeJS.ProcessEnv, timeoutMs = 20_000): Promise<SpawnedGateway> {
  assertBuilt();
  recordEnvSecrets(env);
  const child = spawn(process.execPath, ['--max-semi-space-size=4', 'dist/main.js'], {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  teeSpawnedOutput('gateway', child.stdout, child.stderr);
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (out += d.toString()));
  const stop = () =>
    new Promise<number | null>((res) => {
      if (child.exitCode !== null) return res(child.exitCode);
      child.once('exit', (code) => res(code));
      child.kill('SIGTERM');
    });
  return new Promise((resolveStart, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`gateway did not start in time; output:\n${out}`));
    }, timeoutMs);
    const onData = () => {
      const m = /listening on (?:port )?(http:\/\/[\d.]+:\d+|\d+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.stdout.off('data', onData);
      const url = m[1].startsWith('http') ? m[1] : `http://127.0.0.1:${m[1]}`;
      resolveStart({ child, url, output: () => out, stop });
    };
    child.stdout.on('data', onData);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`gateway exited with ${code}; output:\n${out}`));
    });
  });
}
