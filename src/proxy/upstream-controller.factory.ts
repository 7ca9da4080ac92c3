import {
  Controller,
  Inject,
  Query,
  Req,
  RequestMapping,
  RequestMethod,
  Res,
  SetMetadata,
  type Type,
} from '@nestjs/common';
import { RouteConfig } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public, UpstreamAccess } from '../core/auth/auth.decorators.js';
import { GatewayError } from '../core/errors/gateway-error.js';
import { CompressedForms } from '../core/http/compression.js';
import { queryPairsOf } from '../core/http/query-string.js';
import { ROUTE_DOCS, type RouteDocsMeta, type UpstreamDocs } from '../core/ports/docs.port.js';
import { WRITE_METHODS, type RouteDefinition } from './pipeline.types.js';
import { nestPathOf, requestHeadersOf, type ProxyCall } from './request-builder.js';
import { ProxyService, sendProxyResponse } from './proxy.service.js';
import { notConfigured } from './unserved.js';

/** Metadata on every generated handler: the route it serves (logs, metrics, docs, policy tests). */
export const ROUTE_DEFINITION = Symbol('RouteDefinition');
export const ROUTE_UPSTREAM = Symbol('RouteUpstream');

/** Key of the Fastify route config of every generated handler: the response hook (metrics, request log) reads it. */
export const ATRIUM_ROUTE_CONFIG = 'atriumRoute';

export interface AtriumRouteConfig {
  readonly upstream: string;
  readonly routeId: string;
  readonly route: RouteDefinition;
}

/** The proxied route a request was routed to, if any (from its route's config). */
export function atriumRouteOf(req: FastifyRequest): AtriumRouteConfig | undefined {
  return atriumRouteIn(req.routeOptions.config);
}

/** The proxied route a Fastify route config names, if any (the gateway's own routes name none). */
export function atriumRouteIn(config: unknown): AtriumRouteConfig | undefined {
  return (config as { [ATRIUM_ROUTE_CONFIG]?: AtriumRouteConfig } | undefined)?.[ATRIUM_ROUTE_CONFIG];
}

export interface UpstreamRouteTable {
  readonly name: string;
  /** Named in the refusal of a table this deployment does not serve. */
  readonly title?: string;
  readonly prefixes: readonly string[];
  readonly routes: readonly RouteDefinition[];
  /** Optional OpenAPI annotations of the routes (parameters, examples), keyed by route id. */
  readonly docs?: UpstreamDocs;
}

function methodNameOf(route: RouteDefinition): string {
  return route.id.replace(/[^A-Za-z0-9_]/g, '_');
}

/** The proxy's call for a request Nest routed to `route` (the guards have set its consumer). */
export function proxyCallOf(route: RouteDefinition, req: FastifyRequest): ProxyCall {
  const consumer = req.consumer;
  if (!consumer) throw new GatewayError('UNAUTHENTICATED');
  return {
    route,
    consumer,
    params: (req.params ?? {}) as Record<string, unknown>,
    query: queryPairsOf(req),
    headers: requestHeadersOf(req.headers),
    allHeaders: req.headers,
    body: Buffer.isBuffer(req.body) ? req.body : undefined,
    requestId: String(req.id),
    trace: req.trace,
  };
}

/**
 * One thin controller per upstream, generated from its typed route table and routed by Nest: each route
 * becomes a handler with the route's method and path, its access metadata (read by the global guards), its
 * query DTO (validated by the global pipe) and what the docs module needs (ROUTE_DOCS). The handler hands
 * the call to ProxyService and writes its answer; errors go to the exception filter.
 */
export function createUpstreamController(table: UpstreamRouteTable, served = true): Type<unknown> {
  @Controller([...table.prefixes])
  class UpstreamController {
    constructor(
      @Inject(ProxyService) readonly proxy: ProxyService,
      @Inject(CompressedForms) readonly forms: CompressedForms,
    ) {}
  }
  const proto = UpstreamController.prototype as unknown as Record<string, unknown>;
  const seen = new Set<string>();
  for (const route of table.routes) {
    const name = methodNameOf(route);
    if (seen.has(name)) throw new Error(`route id ${route.id} is not unique in ${table.name}`);
    seen.add(name);
    const handler = served
      ? async function (this: UpstreamController, req: FastifyRequest, reply: FastifyReply) {
          const res = await this.proxy.handle(proxyCallOf(route, req));
          sendProxyResponse(reply, res, req.headers['if-none-match'], (r, body, etag) =>
            this.forms.send(r, body, etag),
          );
        }
      : // Not served (ATRIUM_UPSTREAMS): the route stays in /docs, and answers 404 before any key or quota.
        function (): never {
          throw notConfigured(table);
        };
    Object.defineProperty(handler, 'name', { value: name });
    Object.defineProperty(proto, name, {
      value: handler,
      writable: true,
      configurable: true,
      enumerable: false,
    });
    const descriptor = Object.getOwnPropertyDescriptor(proto, name)!;
    const target = proto as object;
    Req()(target, name, 0);
    Res()(target, name, 1);
    const paramTypes: unknown[] = [Object, Object];
    if (route.query && served) {
      Query()(target, name, 2);
      paramTypes.push(route.query);
    }
    Reflect.defineMetadata('design:paramtypes', paramTypes, target, name);
    RequestMapping({ path: nestPathOf(route.path), method: RequestMethod[route.method] })(
      target,
      name,
      descriptor,
    );
    UpstreamAccess(table.name, WRITE_METHODS.has(route.method))(target, name, descriptor);
    if (!served) Public()(target, name, descriptor);
    SetMetadata(ROUTE_DEFINITION, route)(target, name, descriptor);
    SetMetadata(ROUTE_UPSTREAM, table.name)(target, name, descriptor);
    RouteConfig({
      [ATRIUM_ROUTE_CONFIG]: { upstream: table.name, routeId: route.id, route } satisfies AtriumRouteConfig,
    })(target, name, descriptor);
    // The docs module documents the handler from this when it builds the OpenAPI document (it pulls).
    SetMetadata(ROUTE_DOCS, {
      upstream: table.name,
      prefixes: table.prefixes,
      route,
      docs: table.docs,
    } satisfies RouteDocsMeta<RouteDefinition>)(target, name, descriptor);
  }
  const className = table.name.charAt(0).toUpperCase() + table.name.slice(1) + 'Controller';
  Object.defineProperty(UpstreamController, 'name', { value: className });
  return UpstreamController;
}
