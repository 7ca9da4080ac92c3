import { WRITE_METHODS, type RouteDefinition } from '../pipeline.types.js';
import type { KeyContext } from './cache-key.js';

/** What the cache does with a route, decided once per route when the pipeline is built. */
export type RoutePolicy =
  /** Never cached or coalesced: files, side-effecting GETs, GETs without a TTL (or overridden to 0). */
  | { readonly kind: 'bypass' }
  /** A write: passes through; on success, drops the family's cached GETs for that credential. */
  | { readonly kind: 'write'; readonly family: string }
  | {
      readonly kind: 'cache';
      readonly ttlMs: number;
      readonly key: KeyContext;
      /** The family has write routes, so its entries are indexed for invalidation (Redis). */
      readonly indexed: boolean;
    };

/**
 * TTL of a route: config override for `upstream.family`, else for `family`, else the route table's value.
 * Undefined (or 0) means the route is not cached.
 */
export function resolveTtlMs(
  upstream: string,
  route: RouteDefinition,
  overrides: Readonly<Record<string, number>>,
): number | undefined {
  const specific = overrides[`${upstream}.${route.family}`];
  if (specific !== undefined) return specific;
  const general = overrides[route.family];
  if (general !== undefined) return general;
  return route.cacheTtlMs;
}

/**
 * Whether answers of a route may ever be stored (a config override can set a TTL to 0, never enable one):
 * a GET with a TTL in the route table that is neither a file nor side-effecting. The normaliser parses such
 * answers in full before anyone can store them.
 */
export function mayCache(route: RouteDefinition): boolean {
  return route.method === 'GET' && !route.file && !route.sideEffect && route.cacheTtlMs !== undefined;
}

export function routePolicy(
  upstream: string,
  route: RouteDefinition,
  overrides: Readonly<Record<string, number>>,
  writeFamilies: ReadonlySet<string>,
): RoutePolicy {
  if (WRITE_METHODS.has(route.method)) return { kind: 'write', family: route.family };
  // A TTL on a file or side-effecting route is ignored even if a config override names its family.
  if (!mayCache(route)) return { kind: 'bypass' };
  const ttlMs = resolveTtlMs(upstream, route, overrides);
  if (!ttlMs || ttlMs <= 0) return { kind: 'bypass' };
  return {
    kind: 'cache',
    ttlMs,
    key: { family: route.family },
    indexed: writeFamilies.has(route.family),
  };
}

/** Policies for every route of an upstream. */
export function routePolicies(
  upstream: string,
  routes: readonly RouteDefinition[],
  overrides: Readonly<Record<string, number>>,
): Map<RouteDefinition, RoutePolicy> {
  const writeFamilies = new Set(routes.filter((r) => WRITE_METHODS.has(r.method)).map((r) => r.family));
  return new Map(routes.map((r) => [r, routePolicy(upstream, r, overrides, writeFamilies)]));
}

export type CachedPolicy = Extract<RoutePolicy, { kind: 'cache' }>;

/**
 * The policy of any route of an upstream: decided once per route of the table, and once (then remembered)
 * for a route outside it (tests build requests by hand). What the cache and coalescing stages each build.
 */
export function policyLookup(
  upstream: string,
  routes: readonly RouteDefinition[],
  overrides: Readonly<Record<string, number>>,
): (route: RouteDefinition) => RoutePolicy {
  const policies = routePolicies(upstream, routes, overrides);
  return (route) => {
    let p = policies.get(route);
    if (p === undefined) {
      p = routePolicy(upstream, route, overrides, new Set());
      policies.set(route, p);
    }
    return p;
  };
}
