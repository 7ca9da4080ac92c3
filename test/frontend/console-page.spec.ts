import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONSOLE_ASSETS_DIR, loadConsolePage } from '../../src/console/console-page.js';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('base64');
const asset = (name: string) => readFileSync(join(CONSOLE_ASSETS_DIR, name), 'utf8');

describe('console page from its files', () => {
  it('inlines the style and the script, each allowed by its own hash only', () => {
    const page = loadConsolePage();
    expect(page.html).toContain(`<style>${asset('console.css')}</style>`);
    expect(page.html).toContain(`<script>${asset('console.js')}</script>`);
    expect(page.html).not.toMatch(/<script src|rel="stylesheet"/);
    expect(page.csp).toContain(`script-src 'sha256-${sha256(asset('console.js'))}';`);
    expect(page.csp).toContain(`style-src 'sha256-${sha256(asset('console.css'))}';`);
  });

  describe('refuses assets it cannot inline safely', () => {
    let dir: string;
    const write = (files: Record<string, string>) => {
      for (const name of ['console.html', 'console.css', 'console.js'])
        writeFileSync(join(dir, name), files[name] ?? asset(name));
    };
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'atrium-console-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('a page that does not name its script', () => {
      write({ 'console.html': asset('console.html').replace('<script src="console.js"></script>', '') });
      expect(() => loadConsolePage(dir)).toThrow(/console\.html must contain <script src="console\.js">/);
    });

    it('a script that would close its own element', () => {
      write({ 'console.js': "var s = '</SCRIPT>';" });
      expect(() => loadConsolePage(dir)).toThrow(/contains <\/script/);
    });

    it('a missing file', () => {
      write({});
      rmSync(join(dir, 'console.css'));
      expect(() => loadConsolePage(dir)).toThrow(/ENOENT/);
    });
  });
});
