import { GatewayError } from '../core/errors/gateway-error.js';
import { paramNameMatcher } from '../core/http/param-name.js';
import { removeFormParams, removeJsonMembers, writeBodyKind } from '../core/http/write-body.js';
import type { ProxyRequest } from './pipeline.types.js';

/** Removes every consumer credential from a request before the upstream's own is injected. */
export type CredentialStrip = (req: ProxyRequest) => void;

/**
 * The request side of key custody (no consumer key ever reaches a vendor): parameters named like a credential, compared the way
 * any vendor stack will read the name (`normalizeParamName`: case, `[]`/`[0]`, leading spaces and control
 * characters, NUL tails, dots), go from the query and from a write body's form pairs or top-level JSON
 * members; credential headers go whatever an earlier stage did. The same superset for every upstream: the
 * proxy knows no vendor, and a name one vendor would not read as a key is no loss to the others.
 */
export function credentialStrip(params: readonly string[], headers: readonly string[]): CredentialStrip {
  const isCredential = paramNameMatcher(params);
  return (req) => {
    // Always a new array: the upstream's key is pushed onto it, never onto a query an outer stage holds.
    req.query = req.query.filter(([k]) => !isCredential(k));
    for (const h of headers) delete req.headers[h];
    const body = req.body;
    if (!body || body.length === 0) return;
    const kind = writeBodyKind(req.headers['content-type']);
    // The request builder admits only bodies it can read; anything else here is never forwarded unread.
    if (!kind)
      throw new GatewayError('UNSUPPORTED_FORMAT', {
        parameter: 'Content-Type',
        message: 'A request body must be application/x-www-form-urlencoded or application/json.',
      });
    req.body = kind === 'json' ? removeJsonMembers(body, isCredential) : removeFormParams(body, isCredential);
  };
}
