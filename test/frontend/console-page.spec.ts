import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CONSOLE_ASSETS_DIR, loadConsolePage } from '../../src/console/console-page.js';

const sha256 = (s: string) => createHash('sha256').update(s, 'utf8').digest('base64');
const asset = (name: string) => readFileSync(join(CONSOLE_ASSETS_DIR, name), 'utf8');
// The page's scripts, in the order console.html names them.
const SCRIPTS = ['console-dom.js', 'console-traffic.js', 'console-consumers.js', 'console.js'];

describe('console page from its files', () => {
  it('inlines the style and every script in order, each allowed by its own hash only', () => {
    const page = loadConsolePage();
    expect(page.html).toContain(`<style>${asset('console.css')}</style>`);
    expect(page.html).toContain(SCRIPTS.map((js) => `<script>${asset(js)}</script>`).join('\n    '));
    expect(page.html).not.toMatch(/<script src|rel="stylesheet"/);
    expect(page.csp).toContain(
      `script-src ${SCRIPTS.map((js) => `'sha256-${sha256(asset(js))}'`).join(' ')};`,
    );
    expect(page.csp).toContain(`style-src 'sha256-${sha256(asset('console.css'))}';`);
  });

  it('every script in the folder is named by the page, and each stays under 400 lines', () => {
    const scripts = readdirSync(CONSOLE_ASSETS_DIR).filter((f) => f.endsWith('.js'));
    expect(scripts.sort()).toEqual([...SCRIPTS].sort());
    for (const js of scripts) expect(asset(js).split('\n').length).toBeLessThan(400);
  });

  describe('refuses assets it cannot inline safely', () => {
    let dir: string;
    const write = (files: Record<string, string>) => {
      for (const name of ['console.html', 'console.css', ...SCRIPTS])
        writeFileSync(join(dir, name), files[name] ?? asset(name));
    };
    const withoutScripts = () => asset('console.html').replace(/<script src="[\w-]+\.js"><\/script>/g, '');
    beforeEach(() => {
      dir = mkdtempSync(join(tmpdir(), 'atrium-console-'));
    });
    afterEach(() => rmSync(dir, { recursive: true, force: true }));

    it('a page that names no script', () => {
      write({ 'console.html': withoutScripts() });
      expect(() => loadConsolePage(dir)).toThrow(/console\.html must contain at least one <script src=/);
    });

    it('a page that names a script in another form (it would be blocked)', () => {
      for (const tag of [
        '<script src="console.js" defer></script>',
        '<script>alert(1)</script>',
        '<script src="../secret.js"></script>',
      ]) {
        write({ 'console.html': withoutScripts().replace('</body>', `${tag}</body>`) });
        expect(() => loadConsolePage(dir)).toThrow(/names a script other than as <script src="name\.js">/);
      }
    });

    it('a script that would close its own element, whichever it is', () => {
      write({ 'console-traffic.js': "var s = '</SCRIPT>';" });
      expect(() => loadConsolePage(dir)).toThrow(/console-traffic\.js contains <\/script/);
    });

    it('a missing file', () => {
      write({});
      rmSync(join(dir, 'console.css'));
      expect(() => loadConsolePage(dir)).toThrow(/ENOENT/);
    });

    it('a missing script', () => {
      write({});
      rmSync(join(dir, 'console-consumers.js'));
      expect(() => loadConsolePage(dir)).toThrow(/ENOENT.*console-consumers\.js/);
    });
  });
});
