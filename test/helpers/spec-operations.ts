import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';

export interface SpecOperation {
  method: string;
  path: string;
}

const INTERFACE_HEADINGS: Record<string, string> = {
  macro: 'Macroeconomic data interface',
  company: 'Company data interface v2',
  documents: 'Document interface',
  deals: 'Deal interface',
};

/** The specification lives in shared/, beside the repository (CI clones it there too). */
export function specPath(): string {
  const candidates = [
    process.env.ATRIUM_SPEC,
    resolve(process.cwd(), '../shared/spec/interfaces.md'),
    resolve(__dirname, '../../../shared/spec/interfaces.md'),
  ].filter((p): p is string => !!p);
  const found = candidates.find((p) => existsSync(p));
  if (!found) throw new Error(`spec not found; looked at ${candidates.join(', ')} (set ATRIUM_SPEC)`);
  return found;
}

/** Every `- METHOD /path` line of spec §4.4 under the interface's `####` heading. */
export function specOperations(upstream: keyof typeof INTERFACE_HEADINGS): SpecOperation[] {
  const text = readFileSync(specPath(), 'utf8');
  const section = text.split('### 4.4 Other operations')[1]?.split('\n## ')[0];
  if (!section) throw new Error('spec §4.4 not found');
  const heading = `#### ${INTERFACE_HEADINGS[upstream]}`;
  const start = section.indexOf(heading);
  if (start === -1) throw new Error(`spec heading ${heading} not found`);
  const rest = section.slice(start + heading.length);
  const end = rest.indexOf('\n#### ');
  const body = end === -1 ? rest : rest.slice(0, end);
  const ops: SpecOperation[] = [];
  for (const m of body.matchAll(/^- (GET|POST|PUT|PATCH|DELETE) (\S+)/gm))
    ops.push({ method: m[1], path: m[2] });
  return ops;
}
