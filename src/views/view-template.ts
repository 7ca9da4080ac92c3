/**
 * The views' template language: a value is literal text with `{{ reference }}` holes, and a reference is a
 * JSON path, nothing else: `params.<name>` (a parameter of the view) or `parts.<part>.<key>[<index>]…` (a
 * value in an earlier part's answer). No expressions, no functions, no code.
 */

export type PathStep = string | number;

/** `params.id` or `parts.company.data[0].companyId`. */
export type Reference =
  | { readonly kind: 'param'; readonly name: string }
  | { readonly kind: 'part'; readonly part: string; readonly path: readonly PathStep[] };

/** A compiled value: literal text and references, in order. */
export type Template = readonly (string | Reference)[];

export class TemplateError extends Error {}

const NAME = /^[A-Za-z_][A-Za-z0-9_-]*$/;
const KEY = /^[A-Za-z0-9_$@-]+/;
const HOLE = /\{\{(.*?)\}\}/g;

/** Parses one reference: `params.x`, `parts.p.a.b[0].c`. */
export function parseReference(text: string): Reference {
  const src = text.trim();
  const dot = src.indexOf('.');
  const head = dot === -1 ? src : src.slice(0, dot);
  let rest = dot === -1 ? '' : src.slice(dot + 1);
  const bad = (why: string) => new TemplateError(`"{{${text}}}": ${why}`);
  if (head !== 'params' && head !== 'parts')
    throw bad('a reference starts with params.<name> or parts.<part>');
  const first = KEY.exec(rest)?.[0];
  if (!first || !NAME.test(first)) throw bad(`${head}. must be followed by a name`);
  rest = rest.slice(first.length);
  if (head === 'params') {
    if (rest !== '') throw bad('a parameter is a single name (params.<name>)');
    return { kind: 'param', name: first };
  }
  const path: PathStep[] = [];
  while (rest !== '') {
    if (rest.startsWith('.')) {
      const key = KEY.exec(rest.slice(1))?.[0];
      if (!key) throw bad('a "." must be followed by a key');
      path.push(key);
      rest = rest.slice(1 + key.length);
    } else if (rest.startsWith('[')) {
      const m = /^\[(\d{1,6})\]/.exec(rest);
      if (!m) throw bad('an index is a whole number in brackets, e.g. [0]');
      path.push(Number(m[1]));
      rest = rest.slice(m[0].length);
    } else throw bad('only .key and [index] may follow a part name (JSON paths, no expressions)');
  }
  if (path.length > 16) throw bad('the path is too deep');
  return { kind: 'part', part: first, path };
}

/** Compiles a value: text (with holes), a number or a boolean. */
export function parseTemplate(value: unknown): Template {
  if (typeof value === 'number' || typeof value === 'boolean') return [String(value)];
  if (typeof value !== 'string') throw new TemplateError('must be text, a number or a boolean');
  const out: (string | Reference)[] = [];
  let last = 0;
  for (const m of value.matchAll(HOLE)) {
    if (m.index > last) out.push(value.slice(last, m.index));
    out.push(parseReference(m[1]));
    last = m.index + m[0].length;
  }
  const tail = value.slice(last);
  if (tail.includes('{{') || tail.includes('}}')) throw new TemplateError(`"${value}": an unclosed {{ hole`);
  if (tail !== '') out.push(tail);
  return out;
}

export function referencesOf(t: Template): Reference[] {
  return t.filter((p): p is Reference => typeof p !== 'string');
}

/** Reads a JSON path in a value; undefined when any step is absent. */
export function readPath(value: unknown, path: readonly PathStep[]): unknown {
  let at = value;
  for (const step of path) {
    if (typeof step === 'number') {
      if (!Array.isArray(at)) return undefined;
      at = at[step];
    } else {
      if (typeof at !== 'object' || at === null || Array.isArray(at)) return undefined;
      if (!Object.prototype.hasOwnProperty.call(at, step)) return undefined;
      at = (at as Record<string, unknown>)[step];
    }
  }
  return at;
}

export interface TemplateContext {
  readonly params: Readonly<Record<string, string | undefined>>;
  /** Each finished part's answer (the full answer, before the part's own field selection). */
  readonly parts: Readonly<Record<string, unknown>>;
}

/** What a template resolved to: text, a list of texts (a whole-value reference to an array), or nothing. */
export type Resolved =
  | { readonly ok: true; readonly value: string | readonly string[] | undefined }
  | { readonly ok: false; readonly missing: string };

function scalar(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

export function describeReference(r: Reference): string {
  if (r.kind === 'param') return `params.${r.name}`;
  return `parts.${r.part}` + r.path.map((s) => (typeof s === 'number' ? `[${s}]` : `.${s}`)).join('');
}

/**
 * Fills a template. A value that is one reference alone keeps an array of scalars as a list (a repeated
 * query parameter); an absent parameter gives no value (the query parameter is left out). A reference into
 * a part's answer that finds nothing usable is `missing` (the part cannot run).
 */
export function resolveTemplate(t: Template, ctx: TemplateContext): Resolved {
  if (t.length === 1 && typeof t[0] !== 'string') {
    const r = t[0];
    if (r.kind === 'param') return { ok: true, value: ctx.params[r.name] };
    const v = readPath(ctx.parts[r.part], r.path);
    if (Array.isArray(v)) {
      const list = v.map(scalar);
      if (list.length > 0 && list.every((x) => x !== undefined)) return { ok: true, value: list };
    }
    const s = scalar(v);
    return s === undefined || s === ''
      ? { ok: false, missing: describeReference(r) }
      : { ok: true, value: s };
  }
  let out = '';
  for (const p of t) {
    if (typeof p === 'string') out += p;
    else if (p.kind === 'param') {
      const v = ctx.params[p.name];
      if (v === undefined) return { ok: true, value: undefined };
      out += v;
    } else {
      const s = scalar(readPath(ctx.parts[p.part], p.path));
      if (s === undefined) return { ok: false, missing: describeReference(p) };
      out += s;
    }
  }
  return { ok: true, value: out };
}
