import { hash as digest } from 'node:crypto';
import { isConsumerKeyParam } from '../../core/auth/consumer.js';
import type { QueryPairs } from '../../core/http/query-string.js';
import type { ProxyRequest } from '../pipeline.types.js';

/**
 * Where a cached answer lives. The readable part in front (upstream, credential id, family) is what
 * invalidation and purges select on; the hash covers everything that makes two requests different.
 */
export interface CacheKey {
  /** `upstream:credentialId:family`: the unit a write invalidates. */
  readonly scope: string;
  readonly upstream: string;
  /** 32 hex chars of sha256 over the canonical request. */
  readonly hash: string;
  /** Normalised upstream path (truncated), readable so purges by path prefix need no entry reads. */
  readonly path: string;
  /** `scope:hash:path`: the store key and the in-process coalescing key. */
  readonly full: string;
  /** `scope:hash`: the fleet-wide in-flight marker and error marker. */
  readonly lockId: string;
}

// As the credentials stage strips them: a parameter the upstream never receives neither varies the answer
// nor, as it may hold a key, belongs in a cache key.
/** Upstream-bound headers that cannot change an answer: per-request tracing. */
const NOT_IN_KEY: ReadonlySet<string> = new Set(['x-request-id']);
const MAX_PATH_IN_KEY = 512;

/**
 * The query part of the key: the query as the upstream receives it (already canonical: the request builder
 * sent it through canonical-request.ts), without the consumer's credentials (`token`, `sessionId` as
 * `normalizeParamName` reads them, as the credentials stage removes them). Nothing else is merged here: two
 * requests share a key only when the upstream receives the same query.
 */
export function canonicalQuery(pairs: QueryPairs): string {
  let out = '';
  for (const [k, v] of pairs) {
    if (isConsumerKeyParam(k)) continue;
    out += (out ? '&' : '') + encodeURIComponent(k) + '=' + encodeURIComponent(v);
  }
  return out;
}

/** Key segments must not contain the `:` separator; encoding keeps distinct ids distinct. */
function segment(s: string): string {
  return /^[A-Za-z0-9._-]+$/.test(s) ? s : encodeURIComponent(s);
}

/** Precomputed per route and upstream, so a request only hashes its own parts. */
export interface KeyContext {
  readonly family: string;
}

/** `upstream:credentialId:family`: the unit a write invalidates and purges select on. */
export function scopeOf(upstream: string, credentialId: string, family: string): string {
  return `${segment(upstream)}:${segment(credentialId)}:${segment(family)}`;
}

/** The upstream-bound headers (names are lower case, as the request builder sets them), sorted by name. */
function headersPart(headers: Readonly<Record<string, string>>): string {
  const names = Object.keys(headers).filter((n) => !NOT_IN_KEY.has(n));
  if (names.length > 1) names.sort();
  let out = '';
  for (const n of names) out += n + ':' + headers[n] + '\n';
  return out;
}

/**
 * One-shot hash: no Hash object. SHA-256 and not a cheaper hash: keys are shared between consumers, so a
 * collision someone could craft would serve one request's answer to another.
 */
function sha256Hex(canonical: string): string {
  return digest('sha256', canonical, 'hex').slice(0, 32);
}

/**
 * The cache key of a request, derived from what is sent upstream (the request as built, after every vendor
 * convention, before the credentials stage swaps keys): method, path, canonical query without the
 * consumer's key, every upstream-bound header but tracing, the wire format and the upstream credential id
 * (never a secret). So any input that changes what the upstream sees changes the key; requests that differ
 * only in the consumer's key or its position share one, and so do spellings the canonical request made one
 * (parameter order, list forms, stated defaults).
 */
export function cacheKeyOf(req: ProxyRequest, ctx: KeyContext): CacheKey {
  const canonical =
    req.method +
    '\n' +
    req.upstream +
    '\n' +
    req.path +
    '\n' +
    canonicalQuery(req.query) +
    '\n' +
    headersPart(req.headers) +
    req.format +
    '\n' +
    req.credentialId;
  const hash = sha256Hex(canonical);
  const scope = scopeOf(req.upstream, req.credentialId, ctx.family);
  const path = req.path.length > MAX_PATH_IN_KEY ? req.path.slice(0, MAX_PATH_IN_KEY) : req.path;
  const lockId = scope + ':' + hash;
  return { scope, upstream: req.upstream, hash, path, full: lockId + ':' + path, lockId };
}

/** The path part of a stored key (`scope:hash:path`), for purges by path prefix. */
export function pathOfKey(full: string): string {
  let idx = -1;
  for (let i = 0; i < 4; i++) {
    idx = full.indexOf(':', idx + 1);
    if (idx === -1) return '';
  }
  return full.slice(idx + 1);
}

/** The upstream part of a stored key. */
export function upstreamOfKey(full: string): string {
  const i = full.indexOf(':');
  return i === -1 ? full : full.slice(0, i);
}
