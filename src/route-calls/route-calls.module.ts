import { Module } from '@nestjs/common';
import { ProxyModule } from '../proxy/proxy.module.js';
import { DirectRouteCaller } from './direct-route-caller.js';
import { ROUTE_CALLER } from './route-caller.js';

/** The RouteCaller port (route-caller.ts) and its in-process adapter, shared by batch items and view parts. */
@Module({
  imports: [ProxyModule],
  providers: [{ provide: ROUTE_CALLER, useClass: DirectRouteCaller }],
  exports: [ROUTE_CALLER],
})
export class RouteCallsModule {}
