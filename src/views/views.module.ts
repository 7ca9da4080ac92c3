import { Module } from '@nestjs/common';
import { ProxyModule } from '../proxy/proxy.module.js';
import { RouteCallsModule } from '../route-calls/route-calls.module.js';
import { ViewsController } from './views.controller.js';
import { ViewsMetrics } from './views.metrics.js';
import { ViewsRegistry } from './views.registry.js';
import { ViewsService } from './views.service.js';

/** Composite views (README "Composite views"): `GET /views`, `GET /views/{name}`. */
@Module({
  imports: [RouteCallsModule, ProxyModule],
  controllers: [ViewsController],
  providers: [ViewsRegistry, ViewsMetrics, ViewsService],
  exports: [ViewsService],
})
export class ViewsModule {}
