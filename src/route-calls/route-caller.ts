import { Injectable } from '@nestjs/common';
import { Readable } from 'node:stream';
import { checkUpstreamAccess } from '../core/auth/consumer-auth.guard.js';
import type { Consumer } from '../core/auth/consumer.js';
import { GatewayError } from '../core/errors/gateway-error.js';
import { GatewayExceptionFilter } from '../core/errors/gateway-exception.filter.js';
import { unsafePathReason } from '../core/http/path-safety.js';
import { toQueryObject, type QueryPairs } from '../core/http/query-string.js';
import { QueryValidationPipe } from '../core/http/query-validation.pipe.js';
import { ConsumerQuota } from '../core/throttling/consumer-quota.service.js';
import type { RequestTrace } from '../core/tracing/trace-context.js';
import { RequestObserver } from '../metrics/request-observer.js';
import { WRITE_METHODS, type ProxyResponse, type RouteDefinition } from '../proxy/pipeline.types.js';
import { ProxyService } from '../proxy/proxy.service.js';
import type { AtriumRouteConfig } from '../proxy/upstream-controller.factory.js';
import { UsageService } from '../usage/usage.service.js';

/** Who an inner call runs as: the consumer the outer call (batch, view) was authenticated as. */
export interface RouteCallerIdentity {
  readonly consumer: Consumer;
  /** The outer call's `Accept-Language`, when the inner call sets none of its own. */
  readonly acceptLanguage?: string;
  /** The outer call's trace: inner calls' vendor spans are its children. */
  readonly trace?: RequestTrace;
}

/** One GET of a proxy route, already resolved (batch items, view parts). */
export interface RouteCall {
  readonly route: RouteDefinition;
  /** Canonical gateway URL with its query, e.g. `/macro/feeds?limit=2`: logged, and names the vendor error shape. */
  readonly url: string;
  /** The route's path parameters, decoded. */
  readonly params: Readonly<Record<string, string>>;
  readonly query: QueryPairs;
  readonly requestId: string;
  readonly accept?: string;
  readonly acceptLanguage?: string;
  readonly cacheControl?: string;
}

/** The answer as a direct call would get it: status, the headers a client would see, the body's bytes. */
export interface RouteCallResult {
  readonly status: number;
  /** Lower-case names. */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
}

/**
 * Runs the inner calls of a batch or a view as the calling consumer, through the same access policy and
 * application service as a direct call: the consumer's quota, the upstream permission and the query
 * validation (the outer request was authenticated), then `ProxyService.handle`; errors become the one
 * envelope. Each call is counted in the request metrics and usage, and logged at debug.
 */
@Injectable()
export class RouteCaller {
  /** One config object per route: the request metrics bind the route's series to it. */
  private readonly configs = new Map<RouteDefinition, AtriumRouteConfig>();

  constructor(
    private readonly proxy: ProxyService,
    private readonly quota: ConsumerQuota,
    private readonly filter: GatewayExceptionFilter,
    private readonly queries: QueryValidationPipe,
    private readonly observer: RequestObserver,
    private readonly usage: UsageService,
  ) {}

  async call(caller: RouteCallerIdentity, call: RouteCall): Promise<RouteCallResult> {
    const started = performance.now();
    const { consumer, trace } = caller;
    const config = this.configOf(call.route);
    const headers: Record<string, string> = { 'x-request-id': call.requestId };
    const accept = call.accept ?? 'application/json';
    let result: RouteCallResult;
    let errorCode: string | undefined;
    try {
      const res = await this.run(caller, call, config, headers, accept);
      const body = await bytesOf(res);
      result = { status: res.status, headers: answerHeaders(headers, res), body };
    } catch (err) {
      const format = call.query.find(([k]) => k === 'format')?.[1];
      const a = this.filter.answerFor(err, {
        requestId: call.requestId,
        traceId: trace?.traceId,
        url: call.url,
        format,
        accept,
      });
      errorCode = a.code;
      result = { status: a.status, headers: { ...headers, ...a.headers }, body: Buffer.from(a.body) };
    }
    const cache = result.headers['x-cache'];
    this.observer.record(
      {
        reqId: call.requestId,
        method: call.route.method,
        url: call.url,
        atrium: config,
        status: result.status,
        elapsedMs: performance.now() - started,
        cache,
        consumer: consumer.id,
        traceId: trace?.traceId,
      },
      'debug',
      config,
    );
    this.usage.countCall(consumer.id, config.upstream, { status: result.status, cache, errorCode });
    return result;
  }

  /** Quota (its headers onto `headers`), permission, validation, then the proxy: a direct call's order. */
  private async run(
    caller: RouteCallerIdentity,
    call: RouteCall,
    config: AtriumRouteConfig,
    headers: Record<string, string>,
    accept: string,
  ): Promise<ProxyResponse> {
    const { consumer } = caller;
    const { route } = call;
    const unsafe = unsafePathReason(call.url);
    if (unsafe !== undefined)
      throw new GatewayError('VALIDATION_FAILED', { parameter: 'path', message: unsafe });
    await this.quota.admit(
      consumer,
      { header: (name, value) => (headers[name.toLowerCase()] = String(value)) },
      config.upstream,
    );
    checkUpstreamAccess(consumer, { upstream: config.upstream, write: WRITE_METHODS.has(route.method) });
    if (route.query) this.queries.validatorFor(route.query)(toQueryObject(call.query));
    const lang = call.acceptLanguage ?? caller.acceptLanguage;
    return this.proxy.handle({
      route,
      consumer,
      params: call.params,
      query: call.query,
      headers: {
        accept,
        ...(lang ? { 'accept-language': lang } : {}),
        ...(call.cacheControl ? { 'cache-control': call.cacheControl } : {}),
      },
      requestId: call.requestId,
      trace: caller.trace,
    });
  }

  private configOf(route: RouteDefinition): AtriumRouteConfig {
    let c = this.configs.get(route);
    if (!c) {
      const upstream = this.proxy.upstreamOf(route);
      if (!upstream) throw new GatewayError('INTERNAL', { message: 'Route is not registered.' });
      this.configs.set(route, (c = { upstream, routeId: route.id, route }));
    }
    return c;
  }
}

/** The headers `sendProxyResponse` writes for an answer, onto the call's own (its request id and quota). */
function answerHeaders(headers: Record<string, string>, res: ProxyResponse): Record<string, string> {
  for (const name in res.headers) headers[name] = res.headers[name];
  if (res.cache) headers['x-cache'] = res.cache;
  if (res.ageSeconds !== undefined) headers.age = String(Math.max(0, Math.floor(res.ageSeconds)));
  return headers;
}

/** The answer's bytes; a stream (never batched or viewed, but possible) read whole, as a client would. */
async function bytesOf(res: ProxyResponse): Promise<Buffer> {
  if (!(res.body instanceof Readable)) return res.body;
  const chunks: Buffer[] = [];
  for await (const c of res.body) chunks.push(typeof c === 'string' ? Buffer.from(c) : (c as Buffer));
  return Buffer.concat(chunks);
}
