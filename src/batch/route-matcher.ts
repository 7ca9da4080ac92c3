import type { HttpMethod, RouteDefinition } from '../proxy/pipeline.types.js';
import type { UpstreamDefinition } from '../proxy/upstream-definition.js';

interface Node {
  readonly literal: Map<string, Node>;
  param?: Node;
  /** Per route: the name of the parameter this node's segment fills (a parameter node only). */
  readonly names: Map<RouteDefinition, string>;
  readonly routes: Map<HttpMethod, RouteDefinition>;
}

export interface RouteMatch {
  /** The upstream whose prefix the path starts with. */
  readonly upstream: string;
  /** The route of that method, if the path has one. */
  readonly route?: RouteDefinition;
  /** Every method routed on that path (for a 405 rather than a 404). */
  readonly methods: readonly HttpMethod[];
  /** The route's path parameters, from the segments (already decoded). */
  readonly params: Readonly<Record<string, string>>;
}

const node = (): Node => ({ literal: new Map(), routes: new Map(), names: new Map() });

/** Path segments as Fastify routes them here: duplicate and trailing slashes ignored, query dropped. */
function segmentsOf(path: string): string[] {
  const q = path.indexOf('?');
  return (q === -1 ? path : path.slice(0, q)).split('/').filter((s) => s !== '');
}

/**
 * Finds the route definition a gateway path (`/macro/series/1/data`) resolves to, from the registered
 * upstreams' typed tables, with the router's precedence (a literal segment wins over a parameter). Built
 * once; matching is a walk of at most a few segments.
 */
export class RouteMatcher {
  private readonly root = node();
  private readonly upstreamOfPrefix = new Map<string, string>();

  constructor(defs: readonly Pick<UpstreamDefinition, 'name' | 'prefixes' | 'routes'>[]) {
    for (const def of defs)
      for (const prefix of def.prefixes) {
        this.upstreamOfPrefix.set(prefix, def.name);
        for (const route of def.routes) {
          let at = this.root;
          for (const seg of [prefix, ...segmentsOf(route.path)]) {
            if (seg.includes('{')) {
              at = at.param ??= node();
              at.names.set(route, seg.slice(1, -1));
            } else {
              let next = at.literal.get(seg);
              if (!next) at.literal.set(seg, (next = node()));
              at = next;
            }
          }
          at.routes.set(route.method, route);
        }
      }
  }

  /** The upstream a path belongs to by its first segment (`news` → documents), if any. */
  upstreamOf(path: string): string | undefined {
    const first = segmentsOf(path)[0];
    return first === undefined ? undefined : this.upstreamOfPrefix.get(first);
  }

  /**
   * The route of `method` at `path`, as the router picks it: per method, so a literal segment routed
   * only for POST does not hide a GET parameter route. With no route of that method, the methods the path
   * does take (for a 405).
   */
  match(method: HttpMethod, path: string): RouteMatch | undefined {
    return this.matchSegments(method, segmentsOf(path));
  }

  /** As `match`, for segments already split and percent-decoded (`readItemPath`). */
  matchSegments(method: HttpMethod, segs: readonly string[]): RouteMatch | undefined {
    const upstream = segs.length > 0 ? this.upstreamOfPrefix.get(segs[0]) : undefined;
    if (!upstream) return undefined;
    const path: Node[] = [];
    const exact = walk(this.root, segs, 0, method, path);
    const found = exact ?? walk(this.root, segs, 0, undefined, []);
    if (!found) return undefined;
    const route = exact?.routes.get(method);
    const params: Record<string, string> = {};
    if (route)
      for (let i = 0; i < path.length; i++) {
        const name = path[i].names.get(route);
        if (name !== undefined) params[name] = segs[i];
      }
    return { upstream, route, methods: [...found.routes.keys()], params };
  }
}

/** The node `segs` lead to; `path` collects the node of each segment on the way. */
function walk(
  at: Node,
  segs: readonly string[],
  i: number,
  method: HttpMethod | undefined,
  path: Node[],
): Node | undefined {
  if (i === segs.length) return (method ? at.routes.has(method) : at.routes.size > 0) ? at : undefined;
  const lit = at.literal.get(segs[i]);
  for (const next of [lit, at.param]) {
    if (!next) continue;
    path[i] = next;
    const found = walk(next, segs, i + 1, method, path);
    if (found) return found;
  }
  path.length = i;
  return undefined;
}
