import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Consumer } from '../core/auth/consumer.js';
import { GatewayError } from '../core/errors/gateway-error.js';
import { GatewayExceptionFilter } from '../core/errors/gateway-exception.filter.js';
import { unsafePathReason } from '../core/http/path-safety.js';
import {
  fastifyQueryParser,
  queryFromPairs,
  rawQueryOf,
  type QueryPairs,
} from '../core/http/query-string.js';
import { untracedContext } from '../core/tracing/trace-context.js';
import { RequestObserver } from '../metrics/request-observer.js';
import { ProxyRoutes, routeUrlOf, type PreparedRoute } from '../proxy/proxy-routes.js';
import type { RouteDefinition } from '../proxy/pipeline.types.js';
import { ATRIUM_ROUTE_CONFIG } from '../proxy/upstream-controller.factory.js';
import { UsageService } from '../usage/usage.service.js';
import { RecordingReply } from './recording-reply.js';
import type { RouteCall, RouteCaller, RouteCallerIdentity, RouteCallResult } from './route-caller.js';

const TEMPLATE_PARAM = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/;

function segmentsOf(path: string): string[] {
  return path.split('/').filter((s) => s !== '');
}

/**
 * RouteCaller in process: each call runs the proxy route's own steps (ProxyRoutes.dispatch: quota,
 * permission, validation, pipeline, error envelope) on a request object built from the call, and answers
 * into a RecordingReply; the request metrics, log line and usage count are those of a direct call. No
 * HTTP parsing, routing, socket or hook chain per call, and the caller's key is checked once per outer
 * call (batch, view), not once per part.
 */
@Injectable()
export class DirectRouteCaller implements RouteCaller {
  /** The consumer of an outer call's identity: authenticated on its first inner call. */
  private readonly consumers = new WeakMap<RouteCallerIdentity, Consumer>();
  /** Per route: where each template segment's parameter sits in a gateway path. */
  private readonly paramSlots = new Map<RouteDefinition, ReadonlyArray<string | undefined>>();
  private readonly routeUrls = new Map<RouteDefinition, Map<string, string>>();
  private readonly configs = new Map<RouteDefinition, object>();
  private readonly queries = new WeakMap<QueryPairs, Record<string, unknown>>();

  constructor(
    private readonly routes: ProxyRoutes,
    private readonly filter: GatewayExceptionFilter,
    private readonly observer: RequestObserver,
    private readonly usage: UsageService,
  ) {}

  call(caller: RouteCallerIdentity, call: RouteCall): RouteCallResult | Promise<RouteCallResult> {
    const reply = new RecordingReply();
    reply.header('x-request-id', call.requestId);
    const headers: Record<string, string> = { accept: call.accept ?? 'application/json' };
    const lang = call.acceptLanguage ?? caller.acceptLanguage;
    if (lang) headers['accept-language'] = lang;
    if (call.cacheControl) headers['cache-control'] = call.cacheControl;
    const q = call.url.indexOf('?');
    const path = q === -1 ? call.url : call.url.slice(0, q);
    const prepared = this.routes.preparedOf(call.route);
    const req = {
      id: call.requestId,
      method: 'GET',
      url: call.url,
      headers,
      query: call.query ? this.queryOf(call.query) : fastifyQueryParser(rawQueryOf(call.url)),
      params: call.params ?? (prepared ? this.paramsOf(call.route, path) : undefined),
      body: undefined,
      trace: caller.trace ?? untracedContext(undefined, undefined),
      routeOptions: {
        config: prepared ? this.routeConfig(prepared) : undefined,
        url: prepared ? this.routeUrl(call.route, path) : undefined,
      },
    } as unknown as FastifyRequest;
    const out = reply as unknown as FastifyReply;

    this.run(prepared, caller, req, out);
    // A cache hit has answered already: no promise layer. Anything else is counted when it answers.
    if (reply.answer) return this.finish(req, reply, reply.answer);
    // No abort: the outer call's deadline ends its wait (a race); the part finishes and is counted.
    return reply.done.then((res) => this.finish(req, reply, res));
  }

  private finish(req: FastifyRequest, reply: RecordingReply, res: RouteCallResult): RouteCallResult {
    this.observer.observe(req, reply, 'debug');
    this.usage.count(req, reply);
    return res;
  }

  private run(
    prepared: PreparedRoute | undefined,
    caller: RouteCallerIdentity,
    req: FastifyRequest,
    reply: FastifyReply,
  ): void {
    try {
      if (!prepared) throw new GatewayError('INTERNAL', { message: 'Route is not registered.' });
      const unsafe = unsafePathReason(req.url);
      if (unsafe !== undefined)
        throw new GatewayError('VALIDATION_FAILED', { parameter: 'path', message: unsafe });
      let consumer = caller.consumer ?? this.consumers.get(caller);
      if (consumer === undefined) {
        consumer = this.routes.authenticate(caller.key);
        this.consumers.set(caller, consumer);
      }
      this.routes.dispatch(prepared, consumer, req, reply);
    } catch (err) {
      this.filter.send(err, req, reply);
    }
  }

  /**
   * The query object of a call's pairs, as Fastify's parser builds it; a caller that hands over the same
   * pairs again (a view's memoised part) gets the same object (nothing writes to a request's query).
   */
  private queryOf(pairs: QueryPairs): Record<string, unknown> {
    let q = this.queries.get(pairs);
    if (q === undefined) this.queries.set(pairs, (q = queryFromPairs(pairs)));
    return q;
  }

  /** The route's Fastify config as its registered route carries it (one object per route: metrics bind to it). */
  private routeConfig(p: PreparedRoute): object {
    let c = this.configs.get(p.route);
    if (!c) this.configs.set(p.route, (c = { [ATRIUM_ROUTE_CONFIG]: p.config }));
    return c;
  }

  /** The registered pattern of the route under the path's prefix (`/macro/series/:id/data`), for metrics. */
  private routeUrl(route: RouteDefinition, path: string): string {
    const slash = path.indexOf('/', 1);
    const prefix = slash === -1 ? path.slice(1) : path.slice(1, slash);
    let byPrefix = this.routeUrls.get(route);
    if (!byPrefix) this.routeUrls.set(route, (byPrefix = new Map<string, string>()));
    let url = byPrefix.get(prefix);
    if (url === undefined) byPrefix.set(prefix, (url = routeUrlOf(prefix, route)));
    return url;
  }

  /** The path parameters of a gateway path (`/macro/series/1/data`) of `route`, decoded as the router does. */
  private paramsOf(route: RouteDefinition, path: string): Record<string, string> {
    let slots = this.paramSlots.get(route);
    if (!slots) {
      // The first segment is the upstream's prefix; the rest follow the route's template one to one.
      slots = [undefined, ...segmentsOf(route.path).map((s) => TEMPLATE_PARAM.exec(s)?.[1])];
      this.paramSlots.set(route, slots);
    }
    const segs = segmentsOf(path);
    const params: Record<string, string> = {};
    if (segs.length !== slots.length) return params;
    for (let i = 0; i < segs.length; i++) {
      const name = slots[i];
      if (name === undefined) continue;
      try {
        params[name] = decodeURIComponent(segs[i]);
      } catch {
        params[name] = segs[i];
      }
    }
    return params;
  }
}
