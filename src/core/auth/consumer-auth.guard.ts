import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyRequest } from 'fastify';
import { GatewayError } from '../errors/gateway-error.js';
import { IS_PUBLIC, UPSTREAM_ACCESS, type UpstreamAccessMeta } from './auth.decorators.js';
import type { Consumer } from './consumer.js';
import { extractConsumerKey } from './consumer-key.js';
import { ConsumerStore } from './consumer-store.service.js';
import { looksLikeJwt, TokenVerifier } from './token-verifier.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** Set by ConsumerAuthGuard on every non-public route. */
    consumer?: Consumer;
    /** The end user (`sub`) of an end-user token; absent for gateway keys. */
    tokenSubject?: string;
  }
}

export const CONSUMER_STORE = Symbol('ConsumerStore');
export const TOKEN_VERIFIER = Symbol('TokenVerifier');

/** A consumer an operator disabled: its keys are known, so the answer says why instead of a bare 401. */
export function disabled(consumer: Consumer): GatewayError {
  return new GatewayError('FORBIDDEN', { message: `Consumer "${consumer.id}" is disabled by the operator.` });
}

/** Who is calling (401; 403 for a disabled consumer): the check behind the global guard. */
export function authenticateConsumer(
  store: ConsumerStore,
  key: string | undefined,
  connection?: object,
): Consumer {
  if (!key) throw GatewayError.expected('UNAUTHENTICATED');
  const consumer = store.authenticate(key, connection);
  if (!consumer) throw GatewayError.expected('UNAUTHENTICATED', { message: 'The gateway key is not valid.' });
  if (consumer.enabled === false) throw disabled(consumer);
  return consumer;
}

/** May this consumer use this upstream, and write (403)? The guard's check, and each inner call's. */
export function checkUpstreamAccess(consumer: Consumer, access: UpstreamAccessMeta): void {
  if (!consumer.upstreams.has(access.upstream))
    throw new GatewayError('FORBIDDEN', {
      message: `Consumer "${consumer.id}" may not use the ${access.upstream} interface.`,
    });
  if (access.write && !consumer.write)
    throw new GatewayError('FORBIDDEN', { message: `Consumer "${consumer.id}" may not write.` });
}

/** The first global guard: who is calling (401). UpstreamAccessGuard decides what they may use (403). */
@Injectable()
export class ConsumerAuthGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    @Inject(CONSUMER_STORE) private readonly store: ConsumerStore,
    @Inject(TOKEN_VERIFIER) private readonly tokens: TokenVerifier,
  ) {}

  canActivate(ctx: ExecutionContext): boolean | Promise<boolean> {
    const handler = ctx.getHandler();
    if (
      this.reflector.get<boolean>(IS_PUBLIC, handler) ||
      this.reflector.get<boolean>(IS_PUBLIC, ctx.getClass())
    )
      return true;
    const req = ctx.switchToHttp().getRequest<FastifyRequest>();
    const key = extractConsumerKey(req);
    // A JWT that is not also a key: an end-user token, checked against the consumers that accept tokens.
    if (key !== undefined && looksLikeJwt(key) && !this.store.authenticate(key, req.raw.socket))
      return this.tokens.authenticate(key).then(({ consumer, subject }) => {
        if (consumer.enabled === false) throw disabled(consumer);
        req.consumer = consumer;
        if (subject !== undefined) req.tokenSubject = subject;
        return true;
      });
    req.consumer = authenticateConsumer(this.store, key, req.raw.socket);
    return true;
  }
}

/**
 * May this consumer use this upstream and method (403)? A guard of its own that runs after the quota
 * guard, so a 403 carries the `RateLimit-*` headers like every other answer to a consumer.
 */
@Injectable()
export class UpstreamAccessGuard implements CanActivate {
  constructor(private readonly reflector: Reflector) {}

  canActivate(ctx: ExecutionContext): boolean {
    const consumer = ctx.switchToHttp().getRequest<FastifyRequest>().consumer;
    if (!consumer) return true;
    const access = this.reflector.get<UpstreamAccessMeta | undefined>(UPSTREAM_ACCESS, ctx.getHandler());
    if (access) checkUpstreamAccess(consumer, access);
    return true;
  }
}
