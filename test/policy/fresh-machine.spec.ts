// The README's two commands on a fresh machine: `npm ci` prints nothing to interpret (every install script
// decided, the telemetry one off) and CI requires every system part the suites may skip elsewhere.
// scripts/fresh-clone-test.sh tries both for real on a clone; these catch a drift before CI gets there.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
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
