import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';

/** One relative link of a Markdown file that does not resolve, and why. */
export interface BrokenLink {
  readonly file: string;
  readonly line: number;
  readonly target: string;
  readonly reason: string;
}

export interface LinkReport {
  readonly checked: number;
  readonly broken: BrokenLink[];
}

/** Markdown text with fenced code blocks blanked out (line numbers kept), so examples are not read as links. */
function withoutFences(text: string): string[] {
  let fence: string | undefined;
  return text.split('\n').map((line) => {
    const m = /^\s*(`{3,}|~{3,})/.exec(line);
    if (m) {
      if (!fence) fence = m[1][0];
      else if (m[1][0] === fence) fence = undefined;
      return '';
    }
    return fence ? '' : line;
  });
}

/** The anchor GitHub gives a heading (github-slugger): lower case, punctuation dropped, spaces as `-`. */
export function headingSlug(heading: string): string {
  const text = heading
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .trim()
    .toLowerCase();
  return text.replace(/[^\p{L}\p{N}\p{M}\p{Pc} -]/gu, '').replace(/ /g, '-');
}

/** Every anchor a Markdown file offers: its headings' slugs (duplicates numbered) and explicit ids. */
export function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of withoutFences(text)) {
    const h = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (h) {
      const base = headingSlug(h[1]);
      const n = seen.get(base) ?? 0;
      seen.set(base, n + 1);
      anchors.add(n ? `${base}-${n}` : base);
    }
    for (const m of line.matchAll(/<a\s+(?:id|name)="([^"]+)"/g)) anchors.add(m[1]);
  }
  return anchors;
}

/** The link targets of one line, inline code spans skipped: `[text](target)`, images, `[ref]: target`. */
function targetsOf(line: string): string[] {
  const prose = line.replace(/`[^`]*`/g, (code) => ' '.repeat(code.length));
  const out = [...prose.matchAll(/\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g)].map((m) => m[1]);
  const ref = /^\s{0,3}\[[^\]]+\]:\s*<?(\S+?)>?(?:\s|$)/.exec(prose);
  if (ref) out.push(ref[1]);
  return out;
}

/**
 * Checks every relative link (and its `#anchor`, when it points into a Markdown file) of the given files.
 * Links with a scheme (`https:`, `mailto:`) are not followed; a link may not leave `root`.
 */
export function checkMarkdownLinks(root: string, files: readonly string[]): LinkReport {
  const anchorCache = new Map<string, Set<string>>();
  const anchors = (path: string) => {
    let a = anchorCache.get(path);
    if (!a) anchorCache.set(path, (a = anchorsOf(readFileSync(path, 'utf8'))));
    return a;
  };
  const broken: BrokenLink[] = [];
  let checked = 0;
  for (const file of files) {
    const abs = resolve(root, file);
    const lines = withoutFences(readFileSync(abs, 'utf8'));
    lines.forEach((line, i) => {
      for (const target of targetsOf(line)) {
        if (/^[a-z][a-z0-9+.-]*:/i.test(target)) continue;
        checked++;
        const fail = (reason: string) => broken.push({ file, line: i + 1, target, reason });
        const hash = target.indexOf('#');
        const pathPart = decodeURIComponent(hash < 0 ? target : target.slice(0, hash));
        const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
        const dest = pathPart ? resolve(dirname(abs), pathPart) : abs;
        const rel = relative(root, dest);
        if (rel.startsWith('..') || rel.startsWith(sep)) {
          fail('points outside the repository');
          continue;
        }
        if (!existsSync(dest)) {
          fail(`no such file: ${rel}`);
          continue;
        }
        if (anchor === undefined) continue;
        if (!dest.endsWith('.md') || statSync(dest).isDirectory()) {
          fail('an anchor into a file that is not Markdown');
          continue;
        }
        if (!anchors(dest).has(anchor)) fail(`no heading with the anchor #${anchor} in ${rel}`);
      }
    });
  }
  return { checked, broken };
}

/** README.md, CONTRIBUTING.md and every `docs/*.md` of the repository at `root`. */
export function documentationFiles(root: string): string[] {
  const docs = join(root, 'docs');
  const inDocs = existsSync(docs)
    ? readdirSync(docs)
        .filter((f) => f.endsWith('.md'))
        .map((f) => `docs/${f}`)
    : [];
  return ['README.md', 'CONTRIBUTING.md', ...inDocs.sort()];
}
