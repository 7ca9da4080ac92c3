import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { UPSTREAM_ACCESS, type UpstreamAccessMeta } from '../auth/auth.decorators.js';
import { ConsumerQuota } from './consumer-quota.service.js';

/**
 * The second global guard: counts the request against its consumer's quota (ConsumerQuota) once
 * ConsumerAuthGuard has said who it is. Public routes (no consumer) are not counted. The `RateLimit-*`
 * headers are set on the reply before the handler runs, so error answers carry them too.
 */
@Injectable()
export class ConsumerThrottlerGuard implements CanActivate {
  constructor(
    private readonly reflector: Reflector,
    private readonly quota: ConsumerQuota,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const http = context.switchToHttp();
    const req = http.getRequest<FastifyRequest>();
    const consumer = req.consumer;
    if (consumer === undefined) return true;
    const access = this.reflector.get<UpstreamAccessMeta | undefined>(UPSTREAM_ACCESS, context.getHandler());
    await this.quota.admit(consumer, http.getResponse<FastifyReply>(), access?.upstream ?? 'gateway');
    // An end-user token's own windows (oidc.userLimits), inside the consumer's.
    if (req.tokenSubject !== undefined) await this.quota.admitUser(consumer, req.tokenSubject);
    return true;
  }
}
