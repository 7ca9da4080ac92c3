import { Module, type OnApplicationBootstrap } from '@nestjs/common';
import { HttpAdapterHost } from '@nestjs/core';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { RouteMatcher } from '../batch/route-matcher.js';
import { HealthModule } from '../health/health.module.js';
import { ProxyModule } from '../proxy/proxy.module.js';
import { ProxyService } from '../proxy/proxy.service.js';
import { ViewsModule } from '../views/views.module.js';
import { WatchModule } from '../watch/watch.module.js';
import { CONSOLE_PAGE, loadConsolePage } from './console-page.js';
import { ConsoleStateService } from './console-state.service.js';
import { ConsoleController } from './console.controller.js';
import { OperatorGuard } from './operator.guard.js';
import { RecentErrors } from './recent-errors.service.js';

/** The operator console at `/console` (README "Operator console"). */
@Module({
  imports: [ProxyModule, HealthModule, ViewsModule, WatchModule],
  controllers: [ConsoleController],
  providers: [
    ConsoleStateService,
    OperatorGuard,
    RecentErrors,
    // Read from files at boot when the console is on, so a missing asset fails the start, not a request.
    {
      provide: CONSOLE_PAGE,
      useFactory: (operator: OperatorGuard) => (operator.enabled ? loadConsolePage() : null),
      inject: [OperatorGuard],
    },
  ],
})
export class ConsoleModule implements OnApplicationBootstrap {
  constructor(
    private readonly adapterHost: HttpAdapterHost,
    private readonly proxy: ProxyService,
    private readonly errors: RecentErrors,
    private readonly operator: OperatorGuard,
  ) {}

  onApplicationBootstrap(): void {
    if (!this.operator.enabled) return;
    this.errors.useMatcher(new RouteMatcher(this.proxy.all().map((u) => u.def)));
    // Error answers feed "last errors"; the hook returns at once for every status below 400.
    const fastify = this.adapterHost.httpAdapter.getInstance<FastifyInstance>();
    fastify.addHook(
      'onSend',
      (req: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, p: unknown) => void) => {
        this.errors.observe(req, reply, payload);
        done(null, payload);
      },
    );
  }
}
