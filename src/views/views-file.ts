import { readFileSync } from 'node:fs';
import { parse as parseYaml } from 'yaml';
import { FieldSelectionError, parseFieldSelection } from '../core/http/field-selection.js';
import type { RouteDefinition } from '../proxy/pipeline.types.js';
import {
  pathPiecesOf,
  type ViewDefinition,
  type ViewParam,
  type ViewParamType,
  type ViewPart,
  type ViewSet,
} from './view-definition.js';
import { parseTemplate, referencesOf, TemplateError, type Template } from './view-template.js';

export class ViewsFileError extends Error {}

/** What the loader checks parts against: each interface's prefixes and route table. */
export interface RouteCatalogEntry {
  readonly name: string;
  readonly prefixes: readonly string[];
  readonly routes: readonly RouteDefinition[];
}

export interface ViewLimits {
  /** The longest deadline a view may set. */
  readonly maxTimeoutMs: number;
}

/** Most steps of a view: a chain of at most three calls keeps a view's latency bounded. */
export const MAX_VIEW_STEPS = 3;
export const MAX_VIEW_PARTS = 10;
/** Query names of the gateway itself on `GET /views/{name}` (and key positions): no view parameter may take them. */
export const RESERVED_VIEW_PARAMS: ReadonlySet<string> = new Set([
  'fields',
  'timeoutMs',
  'token',
  'sessionId',
]);
/** A part may not set these: the key positions, the gateway's own `fields`, and `format` (views are JSON). */
const RESERVED_PART_QUERY: ReadonlySet<string> = new Set(['fields', 'format', 'token', 'sessionId']);

const VIEW_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/;
const NAME = /^[A-Za-z_][A-Za-z0-9_-]{0,63}$/;
const QUERY_NAME = /^[A-Za-z0-9_.-]+(\[\d*\])?$/;
const TYPES: readonly ViewParamType[] = ['string', 'integer', 'number', 'boolean'];
const VIEW_KEYS = new Set(['description', 'params', 'parts', 'timeoutMs']);
const PARAM_KEYS = new Set(['type', 'required', 'description', 'pattern', 'enum', 'example', 'default']);
const PART_KEYS = new Set(['route', 'path', 'query', 'optional', 'fields']);

type Raw = Record<string, unknown>;

function isObject(v: unknown): v is Raw {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function scalarText(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  if (typeof v === 'number' || typeof v === 'boolean') return String(v);
  return undefined;
}

/** Checks one parameter value against its declaration; the reason when it does not fit. */
export function checkParamValue(p: ViewParam, value: string): string | undefined {
  switch (p.type) {
    case 'integer':
      if (!/^-?\d{1,15}$/.test(value)) return `${p.name} must be a whole number`;
      break;
    case 'number':
      if (value.trim() === '' || !Number.isFinite(Number(value))) return `${p.name} must be a number`;
      break;
    case 'boolean':
      if (!['true', 'false', '1', '0'].includes(value)) return `${p.name} must be true or false`;
      break;
    default:
      if (value.length > 1024) return `${p.name} must be at most 1024 characters`;
  }
  if (p.enum && !p.enum.includes(value)) return `${p.name} must be one of ${p.enum.join(', ')}`;
  if (p.pattern && !p.pattern.test(value)) return `${p.name} must match ${p.pattern.source}`;
  return undefined;
}

class ViewReader {
  constructor(
    private readonly source: string,
    private readonly view: string,
  ) {}

  fail(field: string, what: string): never {
    throw new ViewsFileError(`views file ${this.source}: view "${this.view}", ${field}: ${what}`);
  }

  keys(raw: Raw, allowed: ReadonlySet<string>, field: string): void {
    for (const k of Object.keys(raw))
      if (!allowed.has(k)) this.fail(`${field}${k}`, `unknown field (known: ${[...allowed].join(', ')})`);
  }

  template(value: unknown, field: string): Template {
    try {
      return parseTemplate(value);
    } catch (e) {
      if (e instanceof TemplateError) this.fail(field, `bad template: ${e.message}`);
      throw e;
    }
  }
}

function readParam(r: ViewReader, name: string, raw: unknown): ViewParam {
  const field = `params.${name}`;
  if (!NAME.test(name)) r.fail(field, 'a parameter name is a letter or _ then letters, digits, _ or -');
  if (RESERVED_VIEW_PARAMS.has(name)) r.fail(field, `"${name}" is the gateway's own parameter`);
  if (!isObject(raw)) r.fail(field, 'must be an object {type, required, …}');
  r.keys(raw, PARAM_KEYS, `${field}.`);
  const type = (raw.type ?? 'string') as ViewParamType;
  if (!TYPES.includes(type)) r.fail(`${field}.type`, `must be one of ${TYPES.join(', ')}`);
  if (raw.required !== undefined && typeof raw.required !== 'boolean')
    r.fail(`${field}.required`, 'must be true or false');
  if (raw.description !== undefined && typeof raw.description !== 'string')
    r.fail(`${field}.description`, 'must be text');
  let pattern: RegExp | undefined;
  if (raw.pattern !== undefined) {
    if (typeof raw.pattern !== 'string') r.fail(`${field}.pattern`, 'must be a regular expression as text');
    try {
      pattern = new RegExp(raw.pattern, 'u');
    } catch {
      r.fail(`${field}.pattern`, 'is not a valid regular expression');
    }
  }
  let values: string[] | undefined;
  if (raw.enum !== undefined) {
    if (!Array.isArray(raw.enum) || raw.enum.length === 0)
      r.fail(`${field}.enum`, 'must be a list of values');
    values = raw.enum.map((v, i) => scalarText(v) ?? r.fail(`${field}.enum[${i}]`, 'must be a scalar'));
  }
  const p: ViewParam = {
    name,
    type,
    required: raw.required === true,
    ...(typeof raw.description === 'string' ? { description: raw.description } : {}),
    ...(pattern ? { pattern } : {}),
    ...(values ? { enum: values } : {}),
  };
  const example = raw.example === undefined ? undefined : scalarText(raw.example);
  const dflt = raw.default === undefined ? undefined : scalarText(raw.default);
  for (const [k, v] of [
    ['example', example],
    ['default', dflt],
  ] as const) {
    if (raw[k] !== undefined && v === undefined) r.fail(`${field}.${k}`, 'must be a scalar');
    const why = v === undefined ? undefined : checkParamValue(p, v);
    if (why) r.fail(`${field}.${k}`, `does not fit the parameter (${why})`);
  }
  if (p.required && example === undefined)
    r.fail(`${field}.example`, 'a required parameter needs an example (for the example URL)');
  if (p.required && dflt !== undefined) r.fail(`${field}.default`, 'a required parameter takes no default');
  return {
    ...p,
    ...(example !== undefined ? { example } : {}),
    ...(dflt !== undefined ? { default: dflt } : {}),
  };
}

interface ResolvedRoute {
  readonly upstream: string;
  readonly prefix: string;
  readonly route: RouteDefinition;
}

function indexRoutes(catalog: readonly RouteCatalogEntry[]): Map<string, ResolvedRoute> {
  const byKey = new Map<string, ResolvedRoute>();
  const trim = (p: string) => p.replace(/\/+$/, '');
  for (const u of catalog)
    for (const route of u.routes) {
      const resolved = { upstream: u.name, prefix: u.prefixes[0], route };
      byKey.set(route.id, resolved);
      // A path names its GET when it has one (the same path may also take writes).
      for (const prefix of u.prefixes) {
        const key = trim(`/${prefix}${route.path}`);
        if (!byKey.has(key) || route.method === 'GET') byKey.set(key, resolved);
      }
    }
  return byKey;
}

function readPart(
  r: ViewReader,
  name: string,
  raw: unknown,
  routes: Map<string, ResolvedRoute>,
): Omit<ViewPart, 'step'> {
  const field = `parts.${name}`;
  if (!NAME.test(name)) r.fail(field, 'a part name is a letter or _ then letters, digits, _ or -');
  if (!isObject(raw)) r.fail(field, 'must be an object {route, path, query, optional, fields}');
  r.keys(raw, PART_KEYS, `${field}.`);
  if (typeof raw.route !== 'string' || raw.route === '')
    r.fail(
      `${field}.route`,
      'name a route by id (company.companies.get) or gateway path (/company/companies/{id})',
    );
  const found = routes.get(raw.route.startsWith('/') ? raw.route.replace(/\/+$/, '') : raw.route);
  if (!found) r.fail(`${field}.route`, `unknown route "${raw.route}"`);
  const { route } = found;
  if (route.method !== 'GET')
    r.fail(`${field}.route`, `"${raw.route}" is a write route (${route.method}); a view only reads`);
  if (route.file) r.fail(`${field}.route`, `"${raw.route}" answers a file; a view composes JSON answers`);
  if (route.sideEffect) r.fail(`${field}.route`, `"${raw.route}" has a side effect; a view only reads`);

  const pathPieces = pathPiecesOf(route.path);
  const wanted = pathPieces.flatMap((piece) => (typeof piece === 'string' ? [] : [piece.param]));
  const rawPath = raw.path ?? {};
  if (!isObject(rawPath)) r.fail(`${field}.path`, 'must be an object of path parameters');
  const path: Record<string, Template> = {};
  for (const p of wanted) {
    if (rawPath[p] === undefined)
      r.fail(`${field}.path.${p}`, `the route ${route.id} needs path parameter "${p}"`);
    path[p] = r.template(rawPath[p], `${field}.path.${p}`);
  }
  for (const k of Object.keys(rawPath))
    if (!wanted.includes(k))
      r.fail(
        `${field}.path.${k}`,
        `the route ${route.id} has no path parameter "${k}" (${wanted.join(', ') || 'none'})`,
      );

  const rawQuery = raw.query ?? {};
  if (!isObject(rawQuery)) r.fail(`${field}.query`, 'must be an object of query parameters');
  const query: [string, Template][] = [];
  for (const [k, v] of Object.entries(rawQuery)) {
    if (!QUERY_NAME.test(k)) r.fail(`${field}.query.${k}`, 'not a query parameter name');
    if (RESERVED_PART_QUERY.has(k.replace(/\[\d*\]$/, '')))
      r.fail(
        `${field}.query.${k}`,
        `"${k}" may not be set by a view (key positions, fields and format are the gateway's)`,
      );
    query.push([k, r.template(v, `${field}.query.${k}`)]);
  }

  if (raw.optional !== undefined && typeof raw.optional !== 'boolean')
    r.fail(`${field}.optional`, 'must be true or false');
  let fields: ViewPart['fields'];
  if (raw.fields !== undefined) {
    if (!Array.isArray(raw.fields) || raw.fields.some((f) => typeof f !== 'string'))
      r.fail(`${field}.fields`, 'must be a list of paths, e.g. [companyName, data[].id]');
    try {
      fields = parseFieldSelection(raw.fields as string[]);
    } catch (e) {
      if (e instanceof FieldSelectionError) r.fail(`${field}.fields`, e.message);
      throw e;
    }
  }
  const templates = [...Object.values(path), ...query.map(([, t]) => t)];
  const dependsOn = [
    ...new Set(templates.flatMap(referencesOf).flatMap((ref) => (ref.kind === 'part' ? [ref.part] : []))),
  ];
  return {
    name,
    upstream: found.upstream,
    prefix: found.prefix,
    route,
    path,
    pathPieces,
    query,
    optional: raw.optional === true,
    ...(fields ? { fields } : {}),
    dependsOn,
  };
}

/** Steps by dependency depth; refuses unknown parts, a cycle, or more than MAX_VIEW_STEPS steps. */
function planSteps(r: ViewReader, parts: readonly Omit<ViewPart, 'step'>[]): Map<string, number> {
  const byName = new Map(parts.map((p) => [p.name, p]));
  const step = new Map<string, number>();
  const visiting: string[] = [];
  const visit = (name: string): number => {
    const known = step.get(name);
    if (known !== undefined) return known;
    if (visiting.includes(name))
      r.fail(`parts.${name}`, `a cycle: ${[...visiting.slice(visiting.indexOf(name)), name].join(' → ')}`);
    visiting.push(name);
    const part = byName.get(name)!;
    let s = 1;
    for (const dep of part.dependsOn) {
      if (dep === name) r.fail(`parts.${name}`, 'a part cannot read its own answer');
      if (!byName.has(dep)) r.fail(`parts.${name}`, `reads unknown part "${dep}"`);
      s = Math.max(s, visit(dep) + 1);
    }
    visiting.pop();
    if (s > MAX_VIEW_STEPS)
      r.fail(`parts.${name}`, `runs at step ${s}; a view has at most ${MAX_VIEW_STEPS} steps`);
    step.set(name, s);
    return s;
  };
  for (const p of parts) visit(p.name);
  return step;
}

function readView(
  source: string,
  name: string,
  raw: unknown,
  routes: Map<string, ResolvedRoute>,
  limits: ViewLimits,
): ViewDefinition {
  const r: ViewReader = new ViewReader(source, name);
  if (!VIEW_NAME.test(name)) r.fail('name', 'a view name is lower-case letters, digits and -, at most 64');
  if (!isObject(raw)) r.fail('view', 'must be an object {description, params, parts}');
  r.keys(raw, VIEW_KEYS, '');
  if (typeof raw.description !== 'string' || raw.description.trim() === '')
    r.fail('description', 'a view needs a description (it is in /docs and GET /views)');
  const rawParams = raw.params ?? {};
  if (!isObject(rawParams)) r.fail('params', 'must be an object of parameters');
  const params = Object.entries(rawParams).map(([n, p]) => readParam(r, n, p));
  if (!isObject(raw.parts) || Object.keys(raw.parts).length === 0)
    r.fail('parts', 'a view needs at least one part');
  if (Object.keys(raw.parts).length > MAX_VIEW_PARTS) r.fail('parts', `at most ${MAX_VIEW_PARTS} parts`);
  const parts = Object.entries(raw.parts).map(([n, p]) => readPart(r, n, p, routes));
  const declared = new Set(params.map((p) => p.name));
  for (const part of parts) {
    const templates: [string, Template][] = [
      ...Object.entries(part.path).map(([k, t]): [string, Template] => [`path.${k}`, t]),
      ...part.query.map(([k, t]): [string, Template] => [`query.${k}`, t]),
    ];
    for (const [where, t] of templates)
      for (const ref of referencesOf(t))
        if (ref.kind === 'param' && !declared.has(ref.name))
          r.fail(
            `parts.${part.name}.${where}`,
            `unknown parameter "params.${ref.name}" (declared: ${[...declared].join(', ') || 'none'})`,
          );
  }
  const steps = planSteps(r, parts);
  let timeoutMs: number | undefined;
  if (raw.timeoutMs !== undefined) {
    const t = raw.timeoutMs;
    if (typeof t !== 'number' || !Number.isInteger(t) || t < 1 || t > limits.maxTimeoutMs)
      r.fail('timeoutMs', `must be a whole number of milliseconds, 1–${limits.maxTimeoutMs}`);
    timeoutMs = t;
  }
  return {
    name,
    description: raw.description,
    params,
    parts: parts.map((p) => ({ ...p, step: steps.get(p.name)! })),
    runOrder: parts
      .map((p, i) => [steps.get(p.name)!, i])
      .sort((a, b) => a[0] - b[0])
      .map(([, i]) => i),
    ...(timeoutMs !== undefined ? { timeoutMs } : {}),
  };
}

/** Validates a parsed views document against the route tables. Throws ViewsFileError naming view and field. */
export function parseViewsDocument(
  doc: unknown,
  catalog: readonly RouteCatalogEntry[],
  limits: ViewLimits,
  source: string,
): ViewSet {
  if (doc === null || doc === undefined) return { views: new Map(), source };
  if (!isObject(doc) || Object.keys(doc).some((k) => k !== 'views'))
    throw new ViewsFileError(`views file ${source}: must be {views: {<name>: {description, params, parts}}}`);
  const rawViews = doc.views ?? {};
  if (!isObject(rawViews)) throw new ViewsFileError(`views file ${source}: views must be an object of views`);
  const routes = indexRoutes(catalog);
  const views = new Map<string, ViewDefinition>();
  for (const [name, raw] of Object.entries(rawViews))
    views.set(name, readView(source, name, raw, routes, limits));
  return { views, source };
}

/** Reads and validates a views file (YAML, or JSON, which is YAML too). */
export function loadViewsFile(
  path: string,
  catalog: readonly RouteCatalogEntry[],
  limits: ViewLimits,
): ViewSet {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (e) {
    throw new ViewsFileError(
      `views file ${path}: cannot read it (${(e as NodeJS.ErrnoException).code ?? 'error'})`,
    );
  }
  let doc: unknown;
  try {
    doc = parseYaml(text, { maxAliasCount: 100 });
  } catch (e) {
    throw new ViewsFileError(
      `views file ${path}: not valid YAML or JSON (${(e as Error).message.split('\n')[0]})`,
    );
  }
  return parseViewsDocument(doc, catalog, limits, path);
}
