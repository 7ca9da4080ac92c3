import { GatewayError } from '../core/errors/gateway-error.js';
import {
  FieldSelectionError,
  parseFieldSelection,
  selectFields,
  type FieldSelection,
} from '../core/http/field-selection.js';
import { baseName } from '../core/http/query-string.js';
import type { ProxyRequest, ProxyResponse } from './pipeline.types.js';

/**
 * The gateway's own query parameter: no vendor route takes a `fields` parameter (the policy test checks the
 * route tables against the spec), so it is never forwarded and never part of a cache key.
 */
export const FIELDS_PARAM = 'fields';

const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json\b/i;

/**
 * Takes `fields=` out of the request (so the upstream never sees it and the cache keeps the full answer)
 * and compiles it. A bad path, or `fields` where there is no JSON answer to select from, is a 400 before
 * any upstream call.
 */
export function takeFieldSelection(req: ProxyRequest): FieldSelection | undefined {
  let given: string[] | undefined;
  for (const [k, v] of req.query) if (baseName(k) === FIELDS_PARAM) (given ??= []).push(v);
  if (!given) return undefined;
  req.query = req.query.filter(([k]) => baseName(k) !== FIELDS_PARAM);
  if (req.method !== 'GET' || req.route.file || req.format !== 'json')
    throw new GatewayError('VALIDATION_FAILED', {
      parameter: FIELDS_PARAM,
      message: 'fields= selects from JSON answers of GET routes (not files, writes or XML).',
    });
  try {
    return parseFieldSelection(given.join(','));
  } catch (e) {
    if (!(e instanceof FieldSelectionError)) throw e;
    throw new GatewayError('VALIDATION_FAILED', {
      parameter: FIELDS_PARAM,
      message: `Invalid fields: ${e.message}. Paths are dotted keys, [] for every element of an array: fields=data[].id,data[].name.`,
    });
  }
}

/** A JSON success answer cut down to the selection (after the cache: the stored entry stays whole). */
export function selectResponseFields(res: ProxyResponse, selection: FieldSelection): ProxyResponse {
  if (res.status !== 200 || !Buffer.isBuffer(res.body) || !JSON_TYPE.test(res.headers['content-type'] ?? ''))
    return res;
  let value: unknown;
  try {
    value = JSON.parse(res.body.toString('utf8'));
  } catch {
    return res;
  }
  // The vendor's validators describe the whole body, not this one.
  const { 'content-length': _len, etag: _etag, ...headers } = res.headers;
  return { ...res, headers, body: Buffer.from(JSON.stringify(selectFields(value, selection))) };
}
