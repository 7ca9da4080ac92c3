import { GatewayError } from '../core/errors/gateway-error.js';

/** A batch item's path as the router would read it. */
export interface ItemPath {
  /** Percent-decoded path segments, empty ones (duplicate and trailing slashes) dropped. */
  readonly segments: readonly string[];
  /** The query as sent, without `?` (`''` when there is none). */
  readonly query: string;
}

// Encoded separators and NUL, as the direct path check refuses them (path-safety.ts).
const ENCODED_SEPARATOR = /%(2f|5c|00)/i;
// eslint-disable-next-line no-control-regex
const UNSAFE_DECODED = /[/\\\u0000-\u001f\u007f]/;

function refuse(parameter: string, message: string): GatewayError {
  return new GatewayError('VALIDATION_FAILED', { parameter, message: `${parameter}: ${message}` });
}

/**
 * Reads an item path once, strictly. An HTTP client or router resolves a path as a URL (WHATWG: `\` is
 * `/`, `.`, `..`, `%2e%2e` segments are resolved away) and then percent-decodes it: `/macro/../metrics`
 * would run `/metrics`. So anything those steps would rewrite is refused here, per item and before anything
 * runs — dot segments in any encoding, backslashes, encoded separators, NULs, a `#`, invalid
 * percent-encoding — and what is left is the list of segments the router would see. The batch then runs
 * the canonical path rebuilt from these segments, never the path as written (an item must not reach a
 * route the router would not give it).
 */
export function readItemPath(path: string, parameter: string): ItemPath {
  if (path.includes('#')) throw refuse(parameter, 'a path must not contain "#" (send it as %23).');
  const q = path.indexOf('?');
  const raw = q === -1 ? path : path.slice(0, q);
  if (raw.includes('\\')) throw refuse(parameter, 'a path must not contain a backslash.');
  const segments: string[] = [];
  for (const seg of raw.split('/')) {
    if (seg === '') continue;
    if (ENCODED_SEPARATOR.test(seg))
      throw refuse(parameter, 'a path must not contain an encoded separator (%2F, %5C) or NUL (%00).');
    let decoded: string;
    try {
      decoded = decodeURIComponent(seg);
    } catch {
      throw refuse(parameter, 'the path has invalid percent-encoding.');
    }
    if (decoded === '.' || decoded === '..')
      throw refuse(parameter, 'a path must not contain "." or ".." segments, in any encoding.');
    if (UNSAFE_DECODED.test(decoded))
      throw refuse(parameter, 'a path segment must not contain a separator or a control character.');
    segments.push(decoded);
  }
  return { segments, query: q === -1 ? '' : path.slice(q + 1) };
}

/**
 * The path to run for a resolved item: its segments, each percent-encoded, so the URL resolution and the
 * router read back exactly these segments. `trailingSlash` follows the route's own spelling (EMIS paths
 * end in `/`).
 */
export function canonicalItemUrl(item: ItemPath, trailingSlash: boolean): string {
  let url = '';
  for (const seg of item.segments) url += '/' + encodeURIComponent(seg);
  if (trailingSlash) url += '/';
  return item.query ? `${url}?${item.query}` : url;
}
