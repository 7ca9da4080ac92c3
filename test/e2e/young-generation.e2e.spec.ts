import { execFileSync } from 'node:child_process';
import { join, resolve } from 'node:path';
import { assertBuilt } from '../helpers/processes.js';

const ROOT = resolve(__dirname, '../..');

// The young-generation cap of the built gateway (core/runtime/young-generation.ts), in a process of its
// own: V8 flags are process-wide. Each run churns objects of which some survive (as requests in flight do)
// and reports the young generation's size in MiB after holding, and after release.
const SCRIPT = `
import { holdYoungGeneration } from ${JSON.stringify(join(ROOT, 'dist/core/runtime/young-generation.js'))};
import { getHeapSpaceStatistics } from 'node:v8';
const mb = Number(process.argv[1]);
const size = () => getHeapSpaceStatistics().find((s) => s.space_name === 'new_space').space_size / 1048576;
const keep = [];
const churn = async () => {
  for (let r = 0; r < 120; r++) {
    for (let i = 0; i < 50000; i++) { const o = { a: i, b: 'x' + i }; if (i % 20 === 0) keep.push(o); }
    if (keep.length > 40000) keep.splice(0, 20000);
    await new Promise((res) => setImmediate(res)); // the GC observer runs between turns, as between requests
  }
};
const hold = holdYoungGeneration(mb);
await churn();
const held = size();
hold.release();
await churn();
console.log(JSON.stringify({ held, released: size() }));
`;

function run(mb: number): { held: number; released: number } {
  assertBuilt();
  const out = execFileSync(process.execPath, ['--input-type=module', '-e', SCRIPT, String(mb)], {
    encoding: 'utf8',
  });
  return JSON.parse(out) as { held: number; released: number };
}

describe('young generation cap', () => {
  it('does not grow while held, then grows up to the cap and no further', () => {
    const capped = run(8);
    expect(capped.held).toBeLessThanOrEqual(2);
    expect(capped.released).toBeGreaterThan(2);
    expect(capped.released).toBeLessThanOrEqual(8);
  });

  it('0 leaves V8 its own sizing (it grows past the cap above under the same churn)', () => {
    const own = run(0);
    expect(own.released).toBeGreaterThan(8);
  });
});
