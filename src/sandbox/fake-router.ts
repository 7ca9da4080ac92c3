// A tiny exact-match router for the fakes. Patterns keep the vendor's spelling (case and trailing
// slash matter, so a gateway that rewrites paths is caught); `:name` matches one raw path segment,
// which is percent-decoded for the handler (`/series/1%2C2/data` gives id "1,2").

export type RouteParams = Readonly<Record<string, string>>;

interface Route<H> {
  method: string;
  regex: RegExp;
  names: string[];
  handler: H;
}

export type RouteMatch<H> =
  | { kind: 'found'; handler: H; params: RouteParams }
  | { kind: 'method-not-allowed'; allowed: string[] }
  | { kind: 'not-found' };

function decodeSegment(raw: string): string {
  try {
    return decodeURIComponent(raw);
  } catch {
    return raw;
  }
}

export class FakeRouter<H> {
  private readonly routes: Route<H>[] = [];

  /** Routes are tried in the order they were added: add literal paths before parameterised ones. */
  add(method: string, pattern: string, handler: H): this {
    const names: string[] = [];
    const source = pattern
      .split('/')
      .map((seg) => {
        if (seg.startsWith(':')) {
          names.push(seg.slice(1));
          return '([^/]+)';
        }
        return seg.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      })
      .join('/');
    this.routes.push({ method: method.toUpperCase(), regex: new RegExp(`^${source}$`), names, handler });
    return this;
  }

  match(method: string, path: string): RouteMatch<H> {
    const allowed: string[] = [];
    for (const route of this.routes) {
      const m = route.regex.exec(path);
      if (!m) continue;
      if (route.method !== method.toUpperCase()) {
        allowed.push(route.method);
        continue;
      }
      const params: Record<string, string> = {};
      route.names.forEach((name, i) => (params[name] = decodeSegment(m[i + 1] ?? '')));
      return { kind: 'found', handler: route.handler, params };
    }
    return allowed.length > 0 ? { kind: 'method-not-allowed', allowed } : { kind: 'not-found' };
  }
}
