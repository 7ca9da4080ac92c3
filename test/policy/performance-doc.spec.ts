// `npm run bench` rewrites the results block of docs/performance.md (bench/run.ts): the markers must be there,
// once each and in order, or a full run would silently leave stale figures behind.
import { copyFileSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PERFORMANCE_DOC, RESULTS_END, RESULTS_START, updateResultsBlock } from '../../bench/lib/summary.js';

const ROOT = join(__dirname, '..', '..');

describe('the benchmark results block of docs/performance.md', () => {
  const text = readFileSync(join(ROOT, PERFORMANCE_DOC), 'utf8');

  it('holds each marker once, start before end', () => {
    expect(text.split(RESULTS_START)).toHaveLength(2);
    expect(text.split(RESULTS_END)).toHaveLength(2);
    expect(text.indexOf(RESULTS_START)).toBeLessThan(text.indexOf(RESULTS_END));
  });

  it('is replaced, and only it, by what npm run bench writes', () => {
    const copy = join(mkdtempSync(join(tmpdir(), 'atrium-perf-')), 'performance.md');
    copyFileSync(join(ROOT, PERFORMANCE_DOC), copy);
    expect(updateResultsBlock(copy, 'NEW RESULTS\n')).toBe(true);
    const after = readFileSync(copy, 'utf8');
    const [before, rest] = text.split(RESULTS_START);
    const [, tail] = rest.split(RESULTS_END);
    expect(after).toBe(`${before}${RESULTS_START}\n\nNEW RESULTS\n\n${RESULTS_END}${tail}`);
  });
});
