import { Module } from '@nestjs/common';
import { SYSTEM_CLOCK } from '../core/time/clock.js';
import { ProxyModule } from '../proxy/proxy.module.js';
import { RouteCallsModule } from '../route-calls/route-calls.module.js';
import { ViewsModule } from '../views/views.module.js';
import { WatchController } from './watch.controller.js';
import { WatchMetrics } from './watch.metrics.js';
import { WATCH_CLOCK, WatchService } from './watch.service.js';

/** `GET /watch`: Server-Sent Events of changed answers, one poll per resource for the fleet (README "Watching"). */
@Module({
  imports: [RouteCallsModule, ProxyModule, ViewsModule],
  controllers: [WatchController],
  providers: [WatchMetrics, WatchService, { provide: WATCH_CLOCK, useValue: SYSTEM_CLOCK }],
  exports: [WatchService],
})
export class WatchModule {}
