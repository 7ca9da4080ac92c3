// The README's two commands on a fresh machine: `npm ci` prints nothing to interpret (every install script
// decided, the telemetry one off) and CI requires every system part the suites may skip elsewhere.
// scripts/fresh-clone-test.sh tries both for real on a clone; these catch a drift before CI gets there.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { requireFlag, SYSTEM_PARTS, type SystemPartName } from '../helpers/system-parts.js';

const ROOT = join(__dirname, '..', '..');
const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
  allowScripts?: Record<string, boolean>;
  scarfSettings?: { enabled?: boolean };
};
const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
  packages: Record<string, { version?: string; hasInstallScript?: boolean }>;
};

/** Locked packages with an install script, as `name@version`. */
function withInstallScripts(): Array<{ name: string; version: string }> {
  return Object.entries(lock.packages)
    .filter(([path, entry]) => path && entry.hasInstallScript)
    .map(([path, entry]) => ({
      name: path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length),
      version: entry.version ?? '',
    }));
}

describe('npm ci on a fresh machine', () => {
  it('every locked install script is allowed or denied in package.json (npm warns about any other)', () => {
    const decided = pkg.allowScripts ?? {};
    const undecided = withInstallScripts().filter(
      ({ name, version }) => !(name in decided) && !(`${name}@${version}` in decided),
    );
    expect(undecided).toEqual([]);
    expect(withInstallScripts().length).toBeGreaterThan(0);
  });

  it('the install telemetry (@scarf/scarf) never runs: denied, and off for an npm that ignores allowScripts', () => {
    expect(pkg.allowScripts?.['@scarf/scarf']).toBe(false);
    expect(pkg.scarfSettings?.enabled).toBe(false);
  });
});

describe('CI requires every system part', () => {
  const ciRun = readFileSync(join(ROOT, '.ci/run'), 'utf8');

  it.each(Object.keys(SYSTEM_PARTS) as SystemPartName[])('.ci/run sets the require flag of %s', (part) => {
    expect(ciRun).toMatch(new RegExp(`^export ${requireFlag(part)}=1$`, 'm'));
  });
});

/** Every test file under test/, relative to the root. */
function specFiles(dir = join(ROOT, 'test')): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? specFiles(join(dir, e.name))
      : e.name.endsWith('.spec.ts')
        ? [relative(ROOT, join(dir, e.name))]
        : [],
  );
}

/** A test file's tier, by jest.config.cjs's rule: the hardening and bench folders, else the name's last part. */
function tierOf(file: string): string | undefined {
  if (file.startsWith('test/hardening/')) return 'hardening';
  if (file.startsWith('test/bench/')) return file.endsWith('.smoke.spec.ts') ? 'bench-smoke' : undefined;
  const suffix = /\.(e2e|redis|fleet|postgres|chromium|deploy)\.spec\.ts$/.exec(file)?.[1];
  return suffix === 'chromium' ? 'browser' : (suffix ?? 'unit');
}

/** The system parts each tier's suites declare (describeNeeding, or describeRedis and describePostgres). */
function partsByTier(): Map<SystemPartName, Set<string>> {
  const used = new Map<SystemPartName, Set<string>>();
  for (const file of specFiles()) {
    const text = readFileSync(join(ROOT, file), 'utf8');
    const parts = [...text.matchAll(/^\s*describeNeeding\(\s*'([\w-]+)'/gm)].map(
      (m) => m[1] as SystemPartName,
    );
    if (/^\s*describeRedis\(/m.test(text)) parts.push('redis');
    if (/^\s*describePostgres\(/m.test(text)) parts.push('postgres');
    const tier = tierOf(file);
    for (const part of parts) if (tier) used.set(part, (used.get(part) ?? new Set()).add(tier));
  }
  return used;
}

/** The README's table of what each tier needs: a row's tiers (their parenthesised detail dropped) and needs. */
function readmeRows(): Array<{ tiers: string[]; needs: string }> {
  const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
  const table = readme.slice(readme.indexOf('| tier | needs | how to get it'));
  const rows = table
    .slice(0, table.search(/\n(?!\|)/))
    .split('\n')
    .slice(2);
  return rows.map((row) => {
    const [tiers, needs] = row.split('|').slice(1, 3);
    return {
      tiers: tiers
        .replace(/\([^)]*\)/g, '')
        .split(',')
        .map((t) => t.trim()),
      needs: needs.replace(/`/g, ''),
    };
  });
}

describe("README's table of what each tier needs", () => {
  const rows = readmeRows();
  const used = partsByTier();

  it('names every tier of jest.config.cjs, and no other', () => {
    const tiers = [...readFileSync(join(ROOT, 'jest.config.cjs'), 'utf8').matchAll(/tier\('([\w-]+)'/g)].map(
      (m) => m[1],
    );
    expect(tiers.length).toBeGreaterThan(5);
    expect(new Set(rows.flatMap((r) => r.tiers))).toEqual(new Set(tiers));
  });

  it.each(Object.keys(SYSTEM_PARTS) as SystemPartName[])(
    'lists %s for exactly the tiers whose suites need it',
    (part) => {
      const listed = rows.filter((r) => r.needs.includes(SYSTEM_PARTS[part].what)).flatMap((r) => r.tiers);
      expect(new Set(listed)).toEqual(used.get(part) ?? new Set());
      expect(listed.length).toBeGreaterThan(0);
    },
  );
});
