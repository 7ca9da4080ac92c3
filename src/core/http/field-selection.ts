/**
 * Field selection (`fields=data[].id,data[].name,meta.total`): keeps only the listed paths of a JSON value.
 * A path is dotted keys, each optionally followed by `[]` to step into every element of an array; a path may
 * start with `[]` when the answer itself is an array. Pure: the input is never changed.
 */

/** One compiled selection: a tree of the kept keys. */
export interface FieldSelection {
  /** The paths as given (normalised), for messages and cache-independent logs. */
  readonly paths: readonly string[];
  readonly root: SelectionNode;
}

interface SelectionNode {
  /** The whole value at this node is kept. */
  whole: boolean;
  readonly keys: Map<string, SelectionNode>;
  /** Kept inside every element (`[]`). */
  each?: SelectionNode;
}

export class FieldSelectionError extends Error {}

const KEY = /^[A-Za-z0-9_$@-]+$/;
/** Bounds keep a hostile `fields=` cheap: at most this many paths of this many segments. */
export const MAX_FIELD_PATHS = 64;
const MAX_SEGMENTS = 16;
const MAX_PATH_LENGTH = 256;

const node = (): SelectionNode => ({ whole: false, keys: new Map() });

type Step = { key: string } | { each: true };

function stepsOf(path: string): Step[] {
  if (path.length > MAX_PATH_LENGTH)
    throw new FieldSelectionError(`the path "${path.slice(0, 40)}…" is too long`);
  const steps: Step[] = [];
  const parts = path.split('.');
  for (const [i, raw] of parts.entries()) {
    let part = raw;
    let key = part;
    const bracket = part.indexOf('[');
    if (bracket !== -1) {
      key = part.slice(0, bracket);
      part = part.slice(bracket);
      if (!/^(\[\])+$/.test(part))
        throw new FieldSelectionError(`"${path}": only "[]" may follow a key (every element of an array)`);
    } else part = '';
    if (key === '') {
      // Only a leading `[]` (the answer is an array) may stand without a key.
      if (!(i === 0 && part !== '')) throw new FieldSelectionError(`"${path}" has an empty segment`);
    } else if (!KEY.test(key))
      throw new FieldSelectionError(`"${path}": a key may hold only letters, digits, _ $ @ -`);
    if (key !== '') steps.push({ key });
    for (let n = part.length / 2; n > 0; n--) steps.push({ each: true });
  }
  if (steps.length > MAX_SEGMENTS) throw new FieldSelectionError(`"${path}" is too deep`);
  return steps;
}

/** Compiles `fields` paths (a comma-separated string, or a list). Throws FieldSelectionError naming the path. */
export function parseFieldSelection(input: string | readonly string[]): FieldSelection {
  const list = (typeof input === 'string' ? input.split(',') : input).map((p) => p.trim());
  if (list.length === 0 || list.every((p) => p === ''))
    throw new FieldSelectionError('give at least one path, e.g. fields=data[].id');
  if (list.length > MAX_FIELD_PATHS)
    throw new FieldSelectionError(`at most ${MAX_FIELD_PATHS} paths may be selected`);
  const root = node();
  for (const path of list) {
    if (path === '') throw new FieldSelectionError('an empty path (two commas in a row?)');
    let at = root;
    for (const step of stepsOf(path)) {
      if ('each' in step) at = at.each ??= node();
      else {
        let next = at.keys.get(step.key);
        if (!next) at.keys.set(step.key, (next = node()));
        at = next;
      }
    }
    at.whole = true;
  }
  return { paths: list, root };
}

const MISSING = Symbol('missing');

function pick(value: unknown, at: SelectionNode): unknown {
  if (at.whole) return value;
  if (Array.isArray(value)) {
    if (!at.each) return MISSING;
    const each = at.each;
    return value.map((v) => {
      const r = pick(v, each);
      return r === MISSING ? null : r;
    });
  }
  if (typeof value !== 'object' || value === null || at.keys.size === 0) return MISSING;
  const src = value as Record<string, unknown>;
  const out: Record<string, unknown> = {};
  for (const [key, child] of at.keys) {
    if (!Object.prototype.hasOwnProperty.call(src, key)) continue;
    const r = pick(src[key], child);
    if (r !== MISSING) out[key] = r;
  }
  return out;
}

/**
 * The value with only the selected paths. Keys absent from the value are left out (no error: an answer
 * may omit optional fields), as is a path that meets a value of another kind (`a[]` on an object); an
 * array element that is not an object where one was expected becomes null, so positions hold.
 */
export function selectFields(value: unknown, selection: FieldSelection): unknown {
  const r = pick(value, selection.root);
  if (r !== MISSING) return r;
  return Array.isArray(value) ? [] : {};
}
