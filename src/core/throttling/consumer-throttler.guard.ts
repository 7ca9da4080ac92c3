import { Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { UPSTREAM_ACCESS, type UpstreamAccessMeta } from '../auth/auth.decorators.js';
import type { Consumer } from '../auth/consumer.js';
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

  // A boolean when the quota storage answered at once (in memory): Nest's guard chain awaits only promises.
  canActivate(context: ExecutionContext): boolean | Promise<boolean> {
    const http = context.switchToHttp();
    const req = http.getRequest<FastifyRequest>();
    const consumer = req.consumer;
    if (consumer === undefined) return true;
    const access = this.reflector.get<UpstreamAccessMeta | undefined>(UPSTREAM_ACCESS, context.getHandler());
    const counted = this.quota.admit(
      consumer,
      http.getResponse<FastifyReply>(),
      access?.upstream ?? 'gateway',
    );
    // An end-user token's own windows (oidc.userLimits), inside the consumer's.
    const subject = req.tokenSubject;
    if (counted instanceof Promise)
      return counted.then(() => (subject === undefined ? true : this.admitUser(consumer, subject)));
    return subject === undefined ? true : this.admitUser(consumer, subject);
  }

  private admitUser(consumer: Consumer, subject: string): boolean | Promise<boolean> {
    const counted = this.quota.admitUser(consumer, subject);
    return counted instanceof Promise ? counted.then(() => true) : true;
  }
}
