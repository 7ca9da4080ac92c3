import type { FastifyRequest } from 'fastify';
import { queryObjectOf } from '../http/query-string.js';

// Vendor clients send these when they have no key (the CEIC Python client sends `token=None`).
const EMPTY = new Set(['', 'none', 'null', 'undefined']);

function usable(v: unknown): string | undefined {
  if (typeof v !== 'string') return Array.isArray(v) ? usable(v[0]) : undefined;
  const t = v.trim();
  return EMPTY.has(t.toLowerCase()) ? undefined : t;
}

/**
 * The consumer's key, from the first position that carries one: `X-API-Key`, `Authorization: Bearer <key>`,
 * a raw `Authorization: <key>` (CEIC clients), the `token` query parameter (CEIC and EMIS clients), or
 * `sessionId` (the EMIS client after its login, answered by the gateway with the key itself).
 */
export function extractConsumerKey(req: FastifyRequest): string | undefined {
  const h = req.headers;
  const x = usable(h['x-api-key']);
  if (x) return x;
  const auth = usable(h.authorization);
  if (auth) {
    const sp = auth.indexOf(' ');
    if (sp === -1) return auth;
    const scheme = auth.slice(0, sp).toLowerCase();
    if (scheme === 'bearer' || scheme === 'token') return usable(auth.slice(sp + 1));
    // Any other scheme (Basic …) is not a gateway key.
  }
  const q = queryObjectOf(req);
  return usable(q.token) ?? usable(q.sessionId);
}
