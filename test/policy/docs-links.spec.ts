// Issue 14 item 6: the README is split into docs/*.md and CONTRIBUTING.md; every relative link between them
// (and every #anchor into a Markdown file) must resolve, and none may leave the repository.
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { anchorsOf, checkMarkdownLinks, documentationFiles, headingSlug } from '../helpers/markdown-links.js';

const ROOT = join(__dirname, '..', '..');

describe('documentation links', () => {
  it('every relative link and anchor in README.md, CONTRIBUTING.md and docs/*.md resolves', () => {
    const files = documentationFiles(ROOT);
    expect(files).toEqual(expect.arrayContaining(['README.md', 'CONTRIBUTING.md', 'docs/configuration.md']));
    const report = checkMarkdownLinks(ROOT, files);
    expect(report.broken).toEqual([]);
    // The README alone links into every docs file: a checker that found no link would prove nothing.
    expect(report.checked).toBeGreaterThan(30);
  });

  it('slugs headings as GitHub does', () => {
    expect(headingSlug('The document interface (`/documents/**`, alias `/news/**`)')).toBe(
      'the-document-interface-documents-alias-news',
    );
    expect(headingSlug('Scaling out with Redis (`docker-compose.yml`)')).toBe(
      'scaling-out-with-redis-docker-composeyml',
    );
    expect(headingSlug('Inbound throttle (`npm run bench:throttle`)')).toBe(
      'inbound-throttle-npm-run-benchthrottle',
    );
    expect([...anchorsOf('# A\n## Notes\n```\n# not a heading\n```\n## Notes\n')]).toEqual([
      'a',
      'notes',
      'notes-1',
    ]);
  });

  it('reports a missing file, a missing anchor, a link out of the repository, and ignores code', () => {
    const root = mkdtempSync(join(tmpdir(), 'atrium-links-'));
    mkdirSync(join(root, 'docs'));
    writeFileSync(join(root, 'docs', 'a.md'), '# Title\n\n## Real section\n');
    writeFileSync(
      join(root, 'README.md'),
      [
        '[ok](docs/a.md#real-section) [ok too](#top) [web](https://example.com/x)',
        '# Top',
        '[gone](docs/missing.md) [bad anchor](docs/a.md#no-such-section) [out](../outside.md)',
        '`[code](docs/missing.md)`',
        '```',
        '[fenced](docs/missing.md)',
        '```',
      ].join('\n'),
    );
    const report = checkMarkdownLinks(root, ['README.md']);
    expect(report.checked).toBe(5);
    expect(report.broken.map((b) => [b.line, b.target])).toEqual([
      [3, 'docs/missing.md'],
      [3, 'docs/a.md#no-such-section'],
      [3, '../outside.md'],
    ]);
  });
});
