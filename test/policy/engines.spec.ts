import { readFileSync } from 'node:fs';
import { join } from 'node:path';

// Issue 12 item 9: package.json's `engines`, the Dockerfile's base image and the dependency pins agree, so
// `npm ci` on the declared Node (and in the image) prints no engine warning.

const ROOT = join(__dirname, '../..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { engines: { node: string } };
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; engines?: { node?: string } | string[] }>;
};
const dockerfile = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');

type Version = [number, number, number];

function parse(v: string): Version {
  const [a = 0, b = 0, c = 0] = v
    .replace(/^v/, '')
    .split('.')
    .map((p) => (p === 'x' || p === '*' ? 0 : Number(p)));
  return [a, b, c];
}

function cmp(a: Version, b: Version): number {
  return a[0] - b[0] || a[1] - b[1] || a[2] - b[2];
}

/** Enough of npm's range grammar for engines fields: `>=`, `>`, `<`, `^`, `x.*`/`x.x`, bare majors, `*`, `||`. */
export function satisfies(version: string, range: string): boolean {
  const v = parse(version);
  return range.split('||').some((alt) => {
    const parts = alt
      .trim()
      .replace(/(>=|<=|>|<|\^|~)\s+/g, '$1')
      .split(/\s+/)
      .filter(Boolean);
    return parts.every((p) => {
      const m = /^(>=|<=|>|<|\^|~)?(.*)$/.exec(p)!;
      const op = m[1] ?? '';
      const target = m[2];
      if (target === '*' || target === '') return true;
      const t = parse(target);
      const wildcardMinor = /^\d+(\.[x*])?$/.test(target);
      const wildcardPatch = /^\d+\.\d+(\.[x*])?$/.test(target);
      switch (op) {
        case '>=':
          return cmp(v, t) >= 0;
        case '>':
          return cmp(v, t) > 0;
        case '<':
          return cmp(v, t) < 0;
        case '<=':
          return cmp(v, t) <= 0;
        case '^':
          return cmp(v, t) >= 0 && v[0] === t[0];
        case '~':
          return cmp(v, t) >= 0 && v[0] === t[0] && v[1] === t[1];
        default:
          if (wildcardMinor) return v[0] === t[0];
          if (wildcardPatch) return v[0] === t[0] && v[1] === t[1];
          return cmp(v, t) === 0;
      }
    });
  });
}

const dependencyEngines = Object.entries(lock.packages)
  .filter(([path, e]) => path !== '' && e.engines && !Array.isArray(e.engines) && e.engines.node)
  .map(([path, e]) => ({ path, version: e.version, node: (e.engines as { node: string }).node }));

const imageNodes = [...dockerfile.matchAll(/^FROM\s+node:(\d+\.\d+\.\d+)\S*/gm)].map((m) => m[1]);

describe('issue 12 item 9: engines, Dockerfile and dependency pins agree', () => {
  it('the range reader understands npm ranges', () => {
    expect(satisfies('20.20.2', '>=22.12.0')).toBe(false);
    expect(satisfies('22.21.1', '^20.19.0 || ^22.13.0 || >=24')).toBe(true);
    expect(satisfies('20.20.2', '>= 10.x')).toBe(true);
    expect(satisfies('22.21.1', '10.* || >= 12.*')).toBe(true);
    expect(satisfies('22.21.1', '>=16 || 14 >=14.17')).toBe(true);
    expect(satisfies('21.0.0', '18 || 20 || >=22')).toBe(false);
  });

  it('every stage of the Dockerfile uses one pinned Node, inside package.json engines', () => {
    expect(imageNodes.length).toBeGreaterThan(0);
    expect(new Set(imageNodes).size).toBe(1);
    expect(satisfies(imageNodes[0], pkg.engines.node)).toBe(true);
  });

  it("the lock file's root entry declares the same engines as package.json", () => {
    expect(lock.packages[''].engines).toEqual(pkg.engines);
  });

  it("every locked dependency supports the image's Node (npm ci prints no engine warning there)", () => {
    const unsupported = dependencyEngines.filter((d) => !satisfies(imageNodes[0], d.node));
    expect(unsupported).toEqual([]);
  });

  it('every locked dependency supports the oldest Node package.json admits', () => {
    const m = /^>=\s*(\d+(?:\.\d+){0,2})$/.exec(pkg.engines.node.trim());
    expect(m).not.toBeNull();
    const oldest = m![1];
    const unsupported = dependencyEngines.filter((d) => !satisfies(oldest, d.node));
    expect(unsupported).toEqual([]);
  });
});
