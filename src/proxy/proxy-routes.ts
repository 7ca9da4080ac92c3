import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import {
  authenticateConsumer,
  checkUpstreamAccess,
  CONSUMER_STORE,
} from '../core/auth/consumer-auth.guard.js';
import type { UpstreamAccessMeta } from '../core/auth/auth.decorators.js';
import type { Consumer } from '../core/auth/consumer.js';
import { extractConsumerKey } from '../core/auth/consumer-key.js';
import type { ConsumerStore } from '../core/auth/consumer-store.service.js';
import { GatewayExceptionFilter } from '../core/errors/gateway-exception.filter.js';
import { compileQueryValidator, type QueryValidator } from '../core/http/query-validator.js';
import { ConsumerThrottlerGuard, type HeaderSink } from '../core/throttling/consumer-throttler.guard.js';
import { WRITE_METHODS, type RouteDefinition } from './pipeline.types.js';
import { nestPathOf } from './request-builder.js';
import { ProxyService, sendProxyResponse } from './proxy.service.js';
import {
  ATRIUM_ROUTE_CONFIG,
  type AtriumRouteConfig,
  type UpstreamRouteTable,
} from './upstream-controller.factory.js';

/** A route's checks, built once at boot: its access rule, its query validator, its route config. */
export interface PreparedRoute {
  readonly route: RouteDefinition;
  readonly access: UpstreamAccessMeta;
  readonly validate?: QueryValidator;
  readonly config: AtriumRouteConfig;
}

const registered = new WeakMap<FastifyInstance, Set<string>>();

const lead = (p: string): string => (p && p[0] !== '/' && p.slice(0, 2) !== '{/' ? '/' + p : p);
const stripEnd = (p: string): string => (p.endsWith('/') ? p.slice(0, -1) : p);

/** The URL Nest would have routed `route` under `prefix` at (its path joining, kept exactly). */
export function routeUrlOf(prefix: string, route: RouteDefinition): string {
  const join = (a: string, b: string): string => (b ? stripEnd(a) + lead(b) : a);
  const p = lead(join(join('', prefix), nestPathOf(route.path)) || '/');
  return p !== '/' ? stripEnd(p) : p;
}

/**
 * The proxied routes as plain Fastify routes, registered at boot from the upstream route tables: consumer
 * auth (401), the inbound quota (429, `RateLimit-*`), the upstream permission (403), query validation
 * (400, compiled once per route) and the pipeline, in the order the Nest guards and pipe ran them, with
 * no Nest router context per request. CORS, the request id and path checks stay in the app-wide
 * onRequest hook; errors go through the one exception filter. The generated Nest controllers remain for
 * the OpenAPI document only (docs-only handlers: the adapter does not route them).
 */
@Injectable()
export class ProxyRoutes implements OnApplicationBootstrap {
  private readonly prepared = new Map<RouteDefinition, PreparedRoute>();

  constructor(
    private readonly proxy: ProxyService,
    @Inject(CONSUMER_STORE) private readonly store: ConsumerStore,
    private readonly throttler: ConsumerThrottlerGuard,
    private readonly filter: GatewayExceptionFilter,
    private readonly adapterHost: HttpAdapterHost,
  ) {}

  /** Every upstream registered with the proxy (at module init) gets its routes before the server starts. */
  onApplicationBootstrap(): void {
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    // Once per upstream and server (bootstrap hooks may run more than once for one instance).
    let done = registered.get(fastify);
    if (!done) registered.set(fastify, (done = new Set()));
    for (const u of this.proxy.all()) {
      if (done.has(u.def.name)) continue;
      done.add(u.def.name);
      this.register(fastify, u.def);
    }
  }

  /** The compiled checks of a registered route (the in-process route caller runs the same ones). */
  preparedOf(route: RouteDefinition): PreparedRoute | undefined {
    return this.prepared.get(route);
  }

  /**
   * Who presents this key (401/403), as a direct call would be authenticated; `connection` (the request's
   * socket) lets a keep-alive connection presenting the same key skip its hash.
   */
  authenticate(key: string | undefined, connection?: object): Consumer {
    return authenticateConsumer(this.store, key, connection);
  }

  /**
   * Quota (headers onto `headers`), permission, validation: what runs between auth and the pipeline.
   * Synchronous unless the quota storage is remote (Redis).
   */
  admit(p: PreparedRoute, consumer: Consumer, headers: HeaderSink, query: unknown): void | Promise<void> {
    const counted = this.throttler.admit(consumer, headers, p.access.upstream);
    if (counted) return counted.then(() => this.permit(p, consumer, query));
    this.permit(p, consumer, query);
  }

  private permit(p: PreparedRoute, consumer: Consumer, query: unknown): void {
    checkUpstreamAccess(consumer, p.access);
    p.validate?.(query);
  }

  /** Registers every route of `table` under each of its prefixes on `fastify`. */
  register(fastify: FastifyInstance, table: Pick<UpstreamRouteTable, 'name' | 'prefixes' | 'routes'>): void {
    for (const route of table.routes) {
      const p = this.prepare(table.name, route);
      for (const prefix of table.prefixes) {
        const url = routeUrlOf(prefix, route);
        // A second definition over the same table (tests wrap one) does not take over a served route.
        if (fastify.hasRoute({ method: route.method, url })) continue;
        fastify.route({
          method: route.method,
          url,
          config: { [ATRIUM_ROUTE_CONFIG]: p.config },
          handler: this.handlerOf(p, url.includes(':')),
        });
      }
    }
  }

  private prepare(upstream: string, route: RouteDefinition): PreparedRoute {
    let p = this.prepared.get(route);
    if (!p) {
      p = {
        route,
        access: { upstream, write: WRITE_METHODS.has(route.method) },
        validate: route.query ? compileQueryValidator(route.query) : undefined,
        config: { upstream, routeId: route.id, route },
      };
      this.prepared.set(route, p);
    }
    return p;
  }

  /**
   * After auth: quota, permission, validation, then the pipeline, ending in exactly one send on `reply` (the
   * answer or the envelope). The Fastify route handler and the in-process route caller both run this.
   */
  dispatch(p: PreparedRoute, consumer: Consumer, req: FastifyRequest, reply: FastifyReply): void {
    req.consumer = consumer;
    req.atriumRoute = p.config;
    let admitted: void | Promise<void>;
    try {
      admitted = this.admit(p, consumer, reply, req.query);
    } catch (err) {
      this.filter.send(err, req, reply);
      return;
    }
    if (admitted)
      void admitted.then(
        () => this.forward(p, req, reply),
        (err: unknown) => this.filter.send(err, req, reply),
      );
    else this.forward(p, req, reply);
  }

  private forward(p: PreparedRoute, req: FastifyRequest, reply: FastifyReply): void {
    this.proxy.forward(p.route, req).then(
      (r) => void sendProxyResponse(reply, r),
      (err: unknown) => this.filter.send(err, req, reply),
    );
  }

  private handlerOf(p: PreparedRoute, hasParams: boolean) {
    // Returns nothing to Fastify: a returned promise would make Fastify send again when it settles before
    // a streamed answer's headers are out. Every path ends in exactly one send (answer or envelope).
    return (req: FastifyRequest, reply: FastifyReply): void => {
      // As Nest's Fastify adapter did: an empty path parameter is no match (404/405), not a route call.
      if (hasParams && hasEmptyParam(req.params)) {
        reply.callNotFound();
        return;
      }
      let consumer: Consumer;
      try {
        consumer = this.authenticate(extractConsumerKey(req), req.raw.socket);
      } catch (err) {
        this.filter.send(err, req, reply);
        return;
      }
      this.dispatch(p, consumer, req, reply);
    };
  }
}

function hasEmptyParam(params: unknown): boolean {
  const o = params as Record<string, string> | undefined;
  for (const name in o) if (o[name] === '' && name !== '*') return true;
  return false;
}
