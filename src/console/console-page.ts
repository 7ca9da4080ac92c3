import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The console's files (assets/console.html, console.css and the scripts the page names): next to this module, so in src/ under Jest and in
 * dist/ once built (`npm run build` copies them, scripts/copy-assets.mjs).
 */
export const CONSOLE_ASSETS_DIR = join(import.meta.dirname, 'assets');

/** DI token of the loaded page (null when the console is off: nothing is read then). */
export const CONSOLE_PAGE = Symbol('ConsolePage');

export interface ConsolePage {
  readonly html: string;
  /** Inline code is allowed by hash only, so the page runs exactly the files it was built from. */
  readonly csp: string;
}

// The tags console.html names its style and scripts with (as Prettier writes them); each is replaced by the
// file's text inline, so the page needs no second request and no 'self' script source. Scripts are inlined
// in the page's order (they share one namespace, set up by the first); names stay plain file names in dir.
const STYLE_TAG = '<link rel="stylesheet" href="console.css" />';
const SCRIPT_TAG = /<script src="([\w-]+\.js)"><\/script>/g;

const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('base64');

// A closing tag inside the inlined text would end the element early.
function element(name: 'style' | 'script', file: string, body: string): string {
  if (body.toLowerCase().includes(`</${name}`))
    throw new Error(`the console ${name} ${file} contains </${name}`);
  return `<${name}>${body}</${name}>`;
}

/** Reads the console's files once and inlines style and scripts into the page (at boot, when it is on). */
export function loadConsolePage(dir: string = CONSOLE_ASSETS_DIR): ConsolePage {
  const read = (name: string): string => readFileSync(join(dir, name), 'utf8');
  const page = read('console.html');
  // Any other script tag (an attribute more, an inline body) would be blocked by the policy: refused here.
  if (/<script/i.test(page.replace(SCRIPT_TAG, '')))
    throw new Error('console.html names a script other than as <script src="name.js"></script>');
  const parts = page.split(STYLE_TAG);
  if (parts.length !== 2) throw new Error(`console.html must contain ${STYLE_TAG} exactly once`);
  const style = read('console.css');
  const scripts: string[] = [];
  // Each side of the style tag is searched on its own, so no inlined text is searched for tags.
  const html = parts
    .map((part) =>
      part.replace(SCRIPT_TAG, (_tag, name: string) => {
        const script = read(name);
        scripts.push(script);
        return element('script', name, script);
      }),
    )
    .join(element('style', 'console.css', style));
  if (!scripts.length)
    throw new Error('console.html must contain at least one <script src="name.js"></script>');
  return {
    html,
    csp: [
      "default-src 'none'",
      `script-src ${[...new Set(scripts.map((js) => `'sha256-${sha256(js)}'`))].join(' ')}`,
      `style-src 'sha256-${sha256(style)}'`,
      "connect-src 'self'",
      "img-src 'self' data:",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
  };
}
