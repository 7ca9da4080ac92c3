import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance } from 'fastify';
import type { RouteCall, RouteCaller, RouteCallerIdentity, RouteCallResult } from './route-caller.js';

/**
 * RouteCaller over `fastify.inject`: the inner call is a full request of the gateway (hooks, global guards,
 * pipes, controller, pipeline, exception filter, request log and metrics) with no socket in between.
 */
@Injectable()
export class InjectRouteCaller implements RouteCaller, OnApplicationBootstrap {
  private fastify?: FastifyInstance;

  constructor(private readonly adapterHost: HttpAdapterHost) {}

  onApplicationBootstrap(): void {
    this.fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
  }

  async call(caller: RouteCallerIdentity, call: RouteCall): Promise<RouteCallResult> {
    const headers: Record<string, string> = {
      'x-api-key': caller.key,
      'x-request-id': call.requestId,
      accept: call.accept ?? 'application/json',
    };
    const lang = call.acceptLanguage ?? caller.acceptLanguage;
    if (lang) headers['accept-language'] = lang;
    if (call.cacheControl) headers['cache-control'] = call.cacheControl;
    const res = await this.fastify!.inject({ method: 'GET', url: call.url, headers, signal: call.signal });
    return { status: res.statusCode, headers: res.headers, body: res.rawPayload };
  }
}
