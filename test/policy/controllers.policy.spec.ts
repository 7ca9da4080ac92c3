import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants.js';
import { ModulesContainer } from '@nestjs/core';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { RouteOptions } from 'fastify';
import { ATRIUM_ROUTE_CONFIG, type AtriumRouteConfig } from '../../src/proxy/upstream-controller.factory.js';
import { IS_PUBLIC, UPSTREAM_ACCESS, type UpstreamAccessMeta } from '../../src/core/auth/auth.decorators.js';
import { createDocumentApp } from '../../src/document-app.js';

// Issue 14 item 4, after immich's "should declare authentication on every route": every handler of every
// controller the gateway routes either carries the upstream access metadata the global guard enforces, or
// is named here on purpose. A new handler that is neither fails this test until someone decides.

/** No consumer key: the global consumer guard lets these through (some have a guard of their own). */
const PUBLIC = [
  // The page is public; its state needs the operator token (OperatorGuard).
  'ConsoleController.page',
  'ConsoleController.apiState',
  'ConsoleController.apiUsage',
  // Vendor-compatible local answers: the gateway holds the vendor session, the client's login is a no-op.
  'DealsAuthController.loginGet',
  'DealsAuthController.loginPost',
  'DealsAuthController.logoutGet',
  'DealsAuthController.logoutPost',
  'DocumentsAuthController.loginGet',
  'DocumentsAuthController.loginPost',
  'DocumentsAuthController.logoutGet',
  'DocumentsAuthController.logoutPost',
  'MacroLoginController.login',
  // Probes and scrapes.
  'HealthController.live',
  'HealthController.ready',
  'MetricsController.scrape',
  // The signed link is the capability.
  'SignedLinkController.follow',
] as const;

/**
 * Operator endpoints: public to the consumer guard, every handler behind the controller's own guard (the
 * operator token, never a consumer key). The test checks the guard is there.
 */
const OPERATOR_CONTROLLERS = ['CacheAdminController', 'ConsumersAdminController', 'UsageController'] as const;

/** A gateway key is required, but the handler spans upstreams and checks each one itself. */
const AUTHENTICATED_ANY_UPSTREAM = [
  // Each item or view part goes back through the router with the caller's key and is authorised on its own.
  'BatchController.run',
  'ViewsController.list',
  'ViewsController.run',
  // Each watched path is read as the caller (RouteCaller, views) and refused on its own in the stream.
  'WatchController.stream',
] as const;

interface Handler {
  readonly name: string;
  readonly controller: string;
  /** Guards of the controller class or the handler itself (beside the global ones). */
  readonly ownGuards: number;
  readonly isPublic: boolean;
  readonly access?: UpstreamAccessMeta;
}

function handlersOf(app: NestFastifyApplication): Handler[] {
  const out: Handler[] = [];
  for (const mod of app.get(ModulesContainer).values())
    for (const wrapper of mod.controllers.values()) {
      const controller = wrapper.metatype as new () => unknown;
      const proto = controller.prototype as object;
      const classPublic = Reflect.getMetadata(IS_PUBLIC, controller) === true;
      const classGuards = (Reflect.getMetadata(GUARDS_METADATA, controller) as unknown[] | undefined) ?? [];
      for (const method of Object.getOwnPropertyNames(proto)) {
        const fn = Object.getOwnPropertyDescriptor(proto, method)?.value as object | undefined;
        if (method === 'constructor' || typeof fn !== 'function') continue;
        // Only route handlers: Nest's request-mapping metadata.
        if (Reflect.getMetadata(METHOD_METADATA, fn) === undefined || !Reflect.hasMetadata(PATH_METADATA, fn))
          continue;
        const guards = (Reflect.getMetadata(GUARDS_METADATA, fn) as unknown[] | undefined) ?? [];
        out.push({
          name: `${controller.name}.${method}`,
          controller: controller.name,
          ownGuards: classGuards.length + guards.length,
          isPublic: classPublic || Reflect.getMetadata(IS_PUBLIC, fn) === true,
          access: Reflect.getMetadata(UPSTREAM_ACCESS, fn) as UpstreamAccessMeta | undefined,
        });
      }
    }
  return out;
}

describe('every controller declares who may call each handler', () => {
  let app: NestFastifyApplication;
  let handlers: Handler[];
  const routes: RouteOptions[] = [];
  beforeAll(async () => {
    // Every route the HTTP server really serves, whoever registered it.
    app = await createDocumentApp((a) =>
      a
        .getHttpAdapter()
        .getInstance()
        .addHook('onRoute', (r) => {
          routes.push(r);
        }),
    );
    handlers = handlersOf(app);
  });
  afterAll(() => app?.close());

  it('finds the handlers of every module (the upstream tables included)', () => {
    expect(handlers.length).toBeGreaterThan(136);
    expect(handlers.filter((h) => h.access).length).toBeGreaterThanOrEqual(136);
  });

  it('each handler is public on the allow-list, authenticated on the allow-list, or carries upstream access', () => {
    const undeclared = handlers
      .filter((h) => !h.access)
      .filter((h) =>
        h.isPublic
          ? !(PUBLIC as readonly string[]).includes(h.name) &&
            !(OPERATOR_CONTROLLERS as readonly string[]).includes(h.controller)
          : !(AUTHENTICATED_ANY_UPSTREAM as readonly string[]).includes(h.name),
      )
      .map((h) => `${h.name} (${h.isPublic ? 'public' : 'authenticated, no upstream'})`);
    expect(undeclared).toEqual([]);
  });

  it('no handler is both public and upstream-restricted (the guard would let anyone in)', () => {
    expect(handlers.filter((h) => h.isPublic && h.access).map((h) => h.name)).toEqual([]);
  });

  it('every handler of an operator controller is behind a guard of its own', () => {
    const operator = handlers.filter((h) =>
      (OPERATOR_CONTROLLERS as readonly string[]).includes(h.controller),
    );
    expect(new Set(operator.map((h) => h.controller)).size).toBe(OPERATOR_CONTROLLERS.length);
    expect(operator.filter((h) => h.ownGuards === 0).map((h) => h.name)).toEqual([]);
  });

  it('the allow-lists name only handlers that exist and are what the list says', () => {
    const byName = new Map(handlers.map((h) => [h.name, h]));
    const stale = [
      ...PUBLIC.filter((n) => byName.get(n)?.isPublic !== true),
      ...AUTHENTICATED_ANY_UPSTREAM.filter((n) => !byName.has(n) || byName.get(n)!.isPublic),
    ];
    expect(stale).toEqual([]);
  });

  it('every live route is a Nest handler checked above; each proxied one names its route and upstream', () => {
    const nestRouted = new Set(handlers.map((h) => h.name));
    const unknown: string[] = [];
    const proxied = new Map<string, AtriumRouteConfig>();
    for (const r of routes) {
      const config = r.config as Record<string, unknown> | undefined;
      const atrium = config?.[ATRIUM_ROUTE_CONFIG] as AtriumRouteConfig | undefined;
      if (atrium) proxied.set(`${String(r.method)} ${r.url}`, atrium);
      if (!nestRouted.has(r.handler.name)) unknown.push(`${String(r.method)} ${r.url} (${r.handler.name})`);
    }
    expect(unknown).toEqual([]);
    // One live route per proxied handler and prefix, each with the upstream access of its route.
    expect(proxied.size).toBeGreaterThanOrEqual(handlers.filter((h) => h.access).length);
    for (const [, atrium] of proxied) expect(atrium.route.id.startsWith(`${atrium.upstream}.`)).toBe(true);
  });

  it('every proxied route refuses a call without a gateway key (401) before anything else', async () => {
    const fastify = app.getHttpAdapter().getInstance();
    const refused: string[] = [];
    let checked = 0;
    for (const r of routes) {
      if (!(r.config as Record<string, unknown> | undefined)?.[ATRIUM_ROUTE_CONFIG]) continue;
      if (r.method === 'HEAD') continue;
      checked++;
      const url = r.url.replace(/:[A-Za-z_][A-Za-z0-9_]*/g, 'x');
      const res = await fastify.inject({ method: r.method as 'GET', url });
      if (res.statusCode !== 401) refused.push(`${String(r.method)} ${url} → ${res.statusCode}`);
    }
    expect(checked).toBeGreaterThan(136);
    expect(refused).toEqual([]);
  });
});
