/**
 * Which methods the router serves on a path, for a 405 with `Allow` instead of a 404 when a path exists
 * but not for the method sent. Filled from Fastify's `onRoute` hook at start-up; consulted only when the
 * router found nothing (never on the hot path).
 */
export class AllowedMethods {
  private readonly routes: Array<{ readonly method: string; readonly pattern: RegExp }> = [];

  add(method: string | string[], url: string): void {
    const source = url
      .replace(/\/+$/, '')
      .split('/')
      .map((seg) =>
        seg === '*'
          ? '.*'
          : seg
              .split(/(:[A-Za-z0-9_]+)/)
              .map((part) => (part.startsWith(':') ? '[^/]+' : part.replace(/[.*+?^${}()|[\]\\-]/g, '\\$&')))
              .join(''),
      )
      .join('/');
    const pattern = new RegExp(`^${source}$`);
    for (const m of Array.isArray(method) ? method : [method]) this.routes.push({ method: m, pattern });
  }

  /** Methods routed on `url` (query ignored; duplicate and trailing slashes as the router ignores them). */
  allowedFor(url: string): string[] {
    const q = url.indexOf('?');
    const path = (q === -1 ? url : url.slice(0, q)).replace(/\/{2,}/g, '/').replace(/\/+$/, '');
    const out = new Set<string>();
    for (const r of this.routes) if (r.pattern.test(path)) out.add(r.method);
    return [...out];
  }
}
