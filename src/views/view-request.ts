import { GatewayError } from '../core/errors/gateway-error.js';
import {
  FieldSelectionError,
  parseFieldSelection,
  type FieldSelection,
} from '../core/http/field-selection.js';
import type { QueryPairs } from '../core/http/query-string.js';
import type { ViewDefinition } from './view-definition.js';
import { checkParamValue } from './views-file.js';

export interface ViewRequest {
  readonly params: Record<string, string | undefined>;
  readonly fields?: FieldSelection;
  readonly timeoutMs: number;
}

function invalid(parameter: string, message: string): GatewayError {
  return new GatewayError('VALIDATION_FAILED', { parameter, message });
}

/**
 * Reads a view call's query: the view's declared parameters (typed, required, pattern, enum), `fields`
 * (over `data`), `timeoutMs` (up to the longest deadline) and the key positions. Anything else is a 400
 * before any part runs, as an unknown parameter of a route would be for a typed client.
 */
export function readViewRequest(
  view: ViewDefinition,
  query: QueryPairs,
  deadlines: { readonly defaultMs: number; readonly maxMs: number },
): ViewRequest {
  const given = new Map<string, string>();
  for (const [k, v] of query) {
    if (k === 'token' || k === 'sessionId') continue;
    if (given.has(k)) throw invalid(k, `${k} must be given once.`);
    given.set(k, v);
  }
  const params: Record<string, string | undefined> = {};
  for (const p of view.params) {
    const v = given.get(p.name);
    given.delete(p.name);
    if (v === undefined || v === '') {
      if (p.required) throw invalid(p.name, `The view ${view.name} needs the parameter ${p.name}.`);
      params[p.name] = p.default;
      continue;
    }
    const why = checkParamValue(p, v);
    if (why) throw invalid(p.name, `Invalid parameter "${p.name}": ${why}.`);
    params[p.name] = v;
  }
  let fields: FieldSelection | undefined;
  const f = given.get('fields');
  given.delete('fields');
  if (f !== undefined)
    try {
      fields = parseFieldSelection(f);
    } catch (e) {
      if (!(e instanceof FieldSelectionError)) throw e;
      throw invalid(
        'fields',
        `Invalid fields: ${e.message}. Paths start at a part's name: fields=company.companyName.`,
      );
    }
  let timeoutMs = deadlines.defaultMs;
  const t = given.get('timeoutMs');
  given.delete('timeoutMs');
  if (t !== undefined) {
    if (!/^\d{1,6}$/.test(t) || Number(t) < 1 || Number(t) > deadlines.maxMs)
      throw invalid('timeoutMs', `timeoutMs must be a whole number of milliseconds, 1–${deadlines.maxMs}.`);
    timeoutMs = Number(t);
  }
  const unknown = [...given.keys()][0];
  if (unknown !== undefined)
    throw invalid(
      unknown,
      `The view ${view.name} takes no parameter "${unknown}" (it takes ${[...view.params.map((p) => p.name), 'fields', 'timeoutMs'].join(', ')}).`,
    );
  return { params, ...(fields ? { fields } : {}), timeoutMs };
}
