import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The console's files (assets/console.html, .css, .js): next to this module, so in src/ under Jest and in
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

// The tags console.html names its style and script with (as Prettier writes them); each is replaced by the
// file's text inline, so the page needs no second request and no 'self' script source.
const STYLE_TAG = '<link rel="stylesheet" href="console.css" />';
const SCRIPT_TAG = '<script src="console.js"></script>';

const sha256 = (s: string): string => createHash('sha256').update(s, 'utf8').digest('base64');

function inline(html: string, tag: string, element: 'style' | 'script', body: string): string {
  const parts = html.split(tag);
  if (parts.length !== 2) throw new Error(`console.html must contain ${tag} exactly once`);
  // A closing tag inside the inlined text would end the element early.
  if (body.toLowerCase().includes(`</${element}`))
    throw new Error(`the console ${element} contains </${element}`);
  return parts.join(`<${element}>${body}</${element}>`);
}

/** Reads the console's files once and inlines style and script into the page (at boot, when it is on). */
export function loadConsolePage(dir: string = CONSOLE_ASSETS_DIR): ConsolePage {
  const read = (name: string): string => readFileSync(join(dir, name), 'utf8');
  const style = read('console.css');
  const script = read('console.js');
  const html = inline(inline(read('console.html'), STYLE_TAG, 'style', style), SCRIPT_TAG, 'script', script);
  return {
    html,
    csp: [
      "default-src 'none'",
      `script-src 'sha256-${sha256(script)}'`,
      `style-src 'sha256-${sha256(style)}'`,
      "connect-src 'self'",
      "img-src 'self' data:",
      "base-uri 'none'",
      "form-action 'none'",
      "frame-ancestors 'none'",
    ].join('; '),
  };
}
