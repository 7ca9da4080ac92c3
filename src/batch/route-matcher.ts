import type { HttpMethod, RouteDefinition } from '../proxy/pipeline.types.js';
import type { UpstreamDefinition } from '../proxy/upstream-definition.js';

interface Node {
  readonly literal: Map<string, Node>;
  param?: Node;
  readonly routes: Map<HttpMethod, RouteDefinition>;
}

export interface RouteMatch {
  /** The upstream whose prefix the path starts with. */
  readonly upstream: string;
  /** The route of that method, if the path has one. */
  readonly route?: RouteDefinition;
  /** Every method routed on that path (for a 405 rather than a 404). */
  readonly methods: readonly HttpMethod[];
}

const node = (): Node => ({ literal: new Map(), routes: new Map() });

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
            if (seg.includes('{')) at = at.param ??= node();
            else {
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
    const exact = walk(this.root, segs, 0, method);
    const found = exact ?? walk(this.root, segs, 0, undefined);
    if (!found) return undefined;
    return { upstream, route: exact?.routes.get(method), methods: [...found.routes.keys()] };
  }
}

function walk(
  at: Node,
  segs: readonly string[],
  i: number,
  method: HttpMethod | undefined,
): Node | undefined {
  if (i === segs.length) return (method ? at.routes.has(method) : at.routes.size > 0) ? at : undefined;
  const lit = at.literal.get(segs[i]);
  const viaLiteral = lit && walk(lit, segs, i + 1, method);
  if (viaLiteral) return viaLiteral;
  return at.param ? walk(at.param, segs, i + 1, method) : undefined;
}
