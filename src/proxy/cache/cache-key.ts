import { hash as digest } from 'node:crypto';
import { getMetadataStorage } from 'class-validator';
import { isConsumerKeyParam } from '../../core/auth/consumer.js';
import { baseName, type QueryPairs } from '../../core/http/query-string.js';
import type { ProxyRequest, RouteDefinition } from '../pipeline.types.js';

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

/** What the key canonicaliser knows about a route's query, read once from its DTO. */
export interface KeyRules {
  /** Parameters the DTO declares boolean: `1`/`0` mean true/false. */
  readonly booleans: ReadonlySet<string>;
  /** Parameters the DTO declares lists: `a,b`, `k=a&k=b` and `k[0]=a&k[1]=b` are one list. */
  readonly lists: ReadonlySet<string>;
}

const NO_RULES: KeyRules = { booleans: new Set(), lists: new Set() };

/**
 * Reads the query DTO's class-validator metadata once per route (at pipeline build): which parameters are
 * booleans and which are lists. Routes without a DTO get no parameter-specific rules: the gateway merges
 * only spellings it knows the upstream treats alike.
 */
export function keyRulesOf(route: RouteDefinition): KeyRules {
  if (!route.query) return NO_RULES;
  const booleans = new Set<string>();
  const lists = new Set<string>();
  for (const m of getMetadataStorage().getTargetValidationMetadatas(route.query, '', true, false)) {
    if (m.name === 'isBoolean') booleans.add(m.propertyName);
    if (m.each) lists.add(m.propertyName);
  }
  return booleans.size === 0 && lists.size === 0 ? NO_RULES : { booleans, lists };
}

// As the credentials stage strips them: a parameter the upstream never receives neither varies the answer
// nor, as it may hold a key, belongs in a cache key.
/** Upstream-bound headers that cannot change an answer: per-request tracing. */
const NOT_IN_KEY: ReadonlySet<string> = new Set(['x-request-id']);
const BOOLEAN_WORD = /^(true|false)$/i;
const MAX_PATH_IN_KEY = 512;

/**
 * The canonical query: consumer credentials removed (`token`, `sessionId` as `normalizeParamName` reads them,
 * as the credentials stage removes them), `True`/`FALSE` lower-cased, DTO booleans and
 * lists normalised, then sorted by name. The sort is stable, so repeated values keep their order (it may
 * matter to the upstream); only the order of different names is ignored.
 */
export function canonicalQuery(pairs: QueryPairs, rules: KeyRules = NO_RULES): string {
  if (pairs.length === 0) return '';
  const items: Array<[string, string]> = [];
  for (const [k, v] of pairs) {
    const base = baseName(k);
    if (isConsumerKeyParam(k)) continue;
    if (rules.lists.has(base)) {
      for (const part of v.split(',')) items.push([base, part.trim()]);
      continue;
    }
    let value = v;
    if (BOOLEAN_WORD.test(v)) value = v.toLowerCase();
    if (rules.booleans.has(base)) {
      const t = value.trim();
      value = t === '1' || t === 'true' ? 'true' : t === '0' || t === 'false' ? 'false' : value;
      items.push([base, value]);
    } else items.push([k, value]);
  }
  if (items.length > 1) items.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
  let out = '';
  for (const [k, v] of items) out += (out ? '&' : '') + encodeURIComponent(k) + '=' + encodeURIComponent(v);
  return out;
}

/** Key segments must not contain the `:` separator; encoding keeps distinct ids distinct. */
function segment(s: string): string {
  return /^[A-Za-z0-9._-]+$/.test(s) ? s : encodeURIComponent(s);
}

/** Precomputed per route and upstream, so a request only hashes its own parts. */
export interface KeyContext {
  readonly family: string;
  readonly rules: KeyRules;
}

const scopes = new Map<string, string>();

export function scopeOf(upstream: string, credentialId: string, family: string): string {
  const id = `${upstream}\u0000${credentialId}\u0000${family}`;
  let s = scopes.get(id);
  if (s === undefined) {
    s = `${segment(upstream)}:${segment(credentialId)}:${segment(family)}`;
    if (scopes.size < 10_000) scopes.set(id, s);
  }
  return s;
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
 * (never a secret). So any input that changes what the upstream sees changes the key (issue 12); requests
 * that differ only in the consumer's key, its position, parameter order or spellings the upstream treats
 * alike share one.
 */
export function cacheKeyOf(req: ProxyRequest, ctx: KeyContext): CacheKey {
  const canonical =
    req.method +
    '\n' +
    req.upstream +
    '\n' +
    req.path +
    '\n' +
    canonicalQuery(req.query, ctx.rules) +
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
