import { GatewayError } from '../core/errors/gateway-error.js';
import { parseQuery, type QueryPairs } from '../core/http/query-string.js';
import { canonicalItemUrl, readItemPath } from '../batch/item-path.js';
import type { RouteMatcher } from '../batch/route-matcher.js';
import { mayCache, resolveTtlMs } from '../proxy/cache/cache-policy.js';
import type { RouteDefinition } from '../proxy/pipeline.types.js';
import type { ViewDefinition } from '../views/view-definition.js';
import { readViewRequest } from '../views/view-request.js';
import { partPathParams } from '../views/view-runner.js';

/** A cached part of a watched view: what its release calendar (if its interface has one) is read for. */
export interface WatchedPart {
  readonly name: string;
  readonly upstream: string;
  readonly route: RouteDefinition;
  /** Its path parameters, when the view's parameters alone give them (not when it reads another part). */
  readonly params?: Readonly<Record<string, string>>;
  /** Its cache TTL, never under the configured floor. */
  readonly intervalMs: number;
}

/** What a watched path reads: one cacheable GET route, or a composite view. */
export type WatchTarget =
  | {
      readonly kind: 'route';
      /** The resource's identity in the fleet: the canonical path with its query as sent. */
      readonly key: string;
      readonly route: RouteDefinition;
      readonly upstream: string;
      readonly params: Readonly<Record<string, string>>;
      readonly query: QueryPairs;
      /** The route's cache TTL: how often the resource is polled (never under the configured floor). */
      readonly intervalMs: number;
    }
  | {
      readonly kind: 'view';
      readonly key: string;
      readonly view: ViewDefinition;
      readonly query: QueryPairs;
      /** The interfaces its parts read (the cooldown check before a poll). */
      readonly upstreams: readonly string[];
      /** Its cached parts; the shortest of their intervals is the view's. */
      readonly parts: readonly WatchedPart[];
      readonly intervalMs: number;
    };

export interface TargetContext {
  readonly matcher: RouteMatcher;
  readonly view: (name: string) => ViewDefinition | undefined;
  readonly upstreamOf: (route: RouteDefinition) => string | undefined;
  readonly ttlOverrides: Readonly<Record<string, number>>;
  readonly minIntervalMs: number;
}

/** A view's parameter values, or undefined when the query is not valid (the view's own call says why). */
function viewParams(
  view: ViewDefinition,
  query: QueryPairs,
): Readonly<Record<string, string | undefined>> | undefined {
  try {
    return readViewRequest(view, query, { defaultMs: 1, maxMs: 999_999 }).params;
  } catch {
    return undefined;
  }
}

const refuse = (message: string): GatewayError =>
  new GatewayError('VALIDATION_FAILED', { parameter: 'path', message });

/**
 * Resolves a watched path (`/macro/series/1/data?fields=…`, `/views/company-overview?code=…`) as the batch
 * reads an item path (no dot segments, encoded separators or backslashes), to a GET route with a cache TTL
 * or a view whose parts have one. Anything else is refused with the reason: an unknown path (404), a route
 * never cached (a file, a side effect, no TTL: there is nothing to poll cheaply), an unknown view.
 */
export function resolveTarget(path: string, ctx: TargetContext): WatchTarget {
  if (!path.startsWith('/')) throw refuse('A watched path starts with "/" (e.g. /macro/series/1/data).');
  const item = readItemPath(path, 'path');
  if (item.segments[0] === 'views' && item.segments.length === 2) {
    const view = ctx.view(item.segments[1]);
    if (!view)
      throw new GatewayError('NOT_FOUND', {
        message: `No view named "${item.segments[1]}"; GET /views lists them.`,
      });
    const query = parseQuery(item.query);
    const params = viewParams(view, query);
    const parts: WatchedPart[] = [];
    for (const p of view.parts) {
      const ttl = mayCache(p.route) ? resolveTtlMs(p.upstream, p.route, ctx.ttlOverrides) : undefined;
      if (ttl === undefined || ttl <= 0) continue;
      const partParams = params && partPathParams(p, params);
      parts.push({
        name: p.name,
        upstream: p.upstream,
        route: p.route,
        ...(partParams && { params: partParams }),
        intervalMs: Math.max(ctx.minIntervalMs, ttl),
      });
    }
    if (parts.length === 0)
      throw refuse(`View "${view.name}" reads no cached route, so it cannot be watched; call it instead.`);
    return {
      kind: 'view',
      key: canonicalItemUrl(item, false),
      view,
      query,
      upstreams: [...new Set(view.parts.map((p) => p.upstream))],
      parts,
      intervalMs: Math.min(...parts.map((p) => p.intervalMs)),
    };
  }
  const match = ctx.matcher.matchSegments('GET', item.segments);
  if (!match?.route)
    throw new GatewayError('NOT_FOUND', {
      message: 'A watched path is a GET of an interface (/macro/…, /company/…) or a view (/views/<name>).',
    });
  const route = match.route;
  const upstream = ctx.upstreamOf(route);
  const ttl = upstream && mayCache(route) ? resolveTtlMs(upstream, route, ctx.ttlOverrides) : undefined;
  if (!upstream || !ttl || ttl <= 0)
    throw refuse(
      `${route.id} is never cached (a file, a side effect or live data), so it cannot be watched.`,
    );
  return {
    kind: 'route',
    key: canonicalItemUrl(item, route.path.endsWith('/')),
    route,
    upstream,
    params: match.params,
    query: parseQuery(item.query),
    intervalMs: Math.max(ctx.minIntervalMs, ttl),
  };
}
