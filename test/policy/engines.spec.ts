// Issue 12 item 9: package.json's engines, the Dockerfile's base image and every installed package agree on
// Node. `npm ci` on the Node we ship must print no EBADENGINE warning (it printed six on Node 20 before).
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import semver from 'semver';

const ROOT = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { engines?: { node?: string } | string[] }>;
};
const dockerNodes = [
  ...readFileSync(join(ROOT, 'Dockerfile'), 'utf8').matchAll(/^FROM node:(\d+\.\d+\.\d+)/gm),
].map((m) => m[1]);

/** Packages whose declared Node range excludes `version`. */
function refusing(version: string): string[] {
  const out: string[] = [];
  for (const [path, entry] of Object.entries(lock.packages)) {
    const range = Array.isArray(entry.engines) ? undefined : entry.engines?.node;
    if (path && range && !semver.satisfies(version, range)) out.push(`${path} (node ${range})`);
  }
  return out;
}

describe('Node engines', () => {
  it('the Dockerfile pins one Node version that package.json admits', () => {
    expect(dockerNodes.length).toBeGreaterThan(0);
    expect(new Set(dockerNodes).size).toBe(1);
    expect(semver.satisfies(dockerNodes[0], pkg.engines.node)).toBe(true);
  });

  it('every locked package supports the Dockerfile Node version', () => {
    expect(refusing(dockerNodes[0])).toEqual([]);
  });

  it('every locked package supports the lowest Node that package.json admits', () => {
    const lowest = semver.minVersion(pkg.engines.node)!.version;
    expect(refusing(lowest)).toEqual([]);
  });

  it('the Node running the tests is the one the Dockerfile ships (same major)', () => {
    expect(semver.major(process.version)).toBe(semver.major(dockerNodes[0]));
  });
});
