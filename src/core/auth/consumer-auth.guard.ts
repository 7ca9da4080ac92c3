import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import { IS_PUBLIC, UPSTREAM_ACCESS, type UpstreamAccessMeta } from './auth.decorators.js';
import type { Consumer } from './consumer.js';
import { extractConsumerKey } from './consumer-key.js';
import { ConsumerStore } from './consumer-store.service.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by ConsumerAuthGuard on every non-public route. */
    consumer?: Consumer;
  }
}

export const CONSUMER_STORE = Symbol('ConsumerStore');

/** The one global guard: who is calling (401) and may they use this upstream and method (403). */
@Injectable()
export class ConsumerAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(CONSUMER_STORE) private readonly store: ConsumerStore,
  ) {}

  canActivate(ctx: ExecutionContext): boolean {
    const handler = ctx.getHandler();
    if (
      this.reflector.get<boolean>(IS_PUBLIC, handler) ||
      this.reflector.get<boolean>(IS_PUBLIC, ctx.getClass())
    )
      return true;
    const req = ctx.switchToHttp().getRequest<FastifyRequest>();
    const key = extractConsumerKey(req);
    if (!key) throw new GatewayError('UNAUTHENTICATED');
    const consumer = this.store.authenticate(key);
    if (!consumer) throw new GatewayError('UNAUTHENTICATED', { message: 'The gateway key is not valid.' });
    const access = this.reflector.get<UpstreamAccessMeta | undefined>(UPSTREAM_ACCESS, handler);
    if (access) {
      if (!consumer.upstreams.has(access.upstream))
        throw new GatewayError('FORBIDDEN', {
          message: `Consumer "${consumer.id}" may not use the ${access.upstream} interface.`,
        });
      if (access.write && !consumer.write)
        throw new GatewayError('FORBIDDEN', { message: `Consumer "${consumer.id}" may not write.` });
    }
    req.consumer = consumer;
    return true;
  }
}
