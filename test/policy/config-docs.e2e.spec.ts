// docs/configuration.md's settings tables are generated from the config classes (npm run docs:config,
// scripts/docs-config.mjs): a variable added, removed or re-defaulted in src/config without regenerating
// fails here.
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');
const SCRIPT = join(ROOT, 'scripts', 'docs-config.mjs');
const DOC = join(ROOT, 'docs', 'configuration.md');

function check(doc?: string) {
  const args = [SCRIPT, '--check', ...(doc ? ['--doc', doc] : [])];
  const r = spawnSync(process.execPath, args, { cwd: ROOT, encoding: 'utf8' });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('docs/configuration.md', () => {
  it('matches the config classes (run npm run docs:config when this fails)', () => {
    expect(check()).toEqual({ status: 0, output: '' });
  });

  it('lists every variable of the classes with the default the source gives it', () => {
    const text = readFileSync(DOC, 'utf8');
    expect(text).toContain('| `PORT` | 3000 | whole number, 0–65535 |');
    expect(text).toContain('| `ATRIUM_BODY_LIMIT_BYTES` | 1 MiB |');
    expect(text).toContain('| `UPSTREAM_<NAME>_RETRY_ATTEMPTS` | 3 |');
    expect(text).toContain('`MACRO`, `COMPANY`, `DOCUMENTS`, `DEALS`');
  });

  it('is reported stale when the table differs from the source', () => {
    const copy = join(mkdtempSync(join(tmpdir(), 'atrium-config-doc-')), 'configuration.md');
    copyFileSync(DOC, copy);
    writeFileSync(copy, readFileSync(copy, 'utf8').replace('| `PORT` | 3000 |', '| `PORT` | 3001 |'));
    const r = check(copy);
    expect(r.status).toBe(1);
    expect(r.output).toContain('is stale: run npm run docs:config');
  });
});
