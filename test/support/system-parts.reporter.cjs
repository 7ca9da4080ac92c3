// The run's summary of what was skipped for a missing system part, printed after Jest's own summary.
// The suites write the journal (test/helpers/system-parts.ts: one `<part>.json` verdict per part probed,
// one skips.jsonl line per skipped describe block); this reporter names its directory before any worker
// starts, so every worker inherits it, and reads it when the run is over.
const { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join, relative } = require('node:path');

const JOURNAL_ENV = 'ATRIUM_SYSTEM_PARTS_DIR';

class SystemPartsReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    /** Test file -> its tier (the Jest project's display name). */
    this.tiers = new Map();
  }

  onRunStart() {
    this.dir = mkdtempSync(join(tmpdir(), 'atrium-system-parts-'));
    process.env[JOURNAL_ENV] = this.dir;
  }

  onTestResult(test) {
    const name = test.context.config.displayName;
    this.tiers.set(test.path, (name && name.name) || 'tests');
  }

  onRunComplete() {
    const dir = this.dir;
    if (!dir || !existsSync(dir)) return;
    const parts = readdirSync(dir)
      .filter((n) => n.endsWith('.json'))
      .map((n) => JSON.parse(readFileSync(join(dir, n), 'utf8')))
      .filter((v) => v.missing !== null);
    const skipsFile = join(dir, 'skips.jsonl');
    const skips = existsSync(skipsFile)
      ? readFileSync(skipsFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l))
      : [];
    rmSync(dir, { recursive: true, force: true });
    const lines = [];
    for (const p of parts) {
      const mine = skips.filter((s) => s.part === p.part);
      if (mine.length === 0) continue;
      const byTier = new Map();
      for (const s of mine) {
        const tier = this.tiers.get(s.file) || 'tests';
        if (!byTier.has(tier)) byTier.set(tier, new Set());
        byTier.get(tier).add(relative(this.rootDir, s.file));
      }
      const where = [...byTier]
        .map(([tier, files]) => `${tier} tier: ${[...files].sort().join(', ')}`)
        .join('; ');
      lines.push(`  ${p.what}: ${p.missing}. Skipped in the ${where}. To run them: ${p.install}`);
    }
    if (lines.length === 0) return;
    process.stderr.write(
      `\nSkipped for a missing system part (under CI, with ATRIUM_REQUIRE_<PART>=1 as .ci/run sets, they fail instead):\n${lines.join('\n')}\n`,
    );
  }
}

module.exports = SystemPartsReporter;
