import { Module } from '@nestjs/common';
import { InjectRouteCaller } from './inject-route-caller.js';
import { ROUTE_CALLER } from './route-caller.js';

/** The RouteCaller port (route-caller.ts) and its adapter, shared by batch items and view parts. */
@Module({
  providers: [{ provide: ROUTE_CALLER, useClass: InjectRouteCaller }],
  exports: [ROUTE_CALLER],
})
export class RouteCallsModule {}
