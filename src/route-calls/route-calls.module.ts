import { Module } from '@nestjs/common';
import { ProxyModule } from '../proxy/proxy.module.js';
import { RouteCaller } from './route-caller.js';

/** The inner calls of batch items and view parts (route-caller.ts). */
@Module({
  imports: [ProxyModule],
  providers: [RouteCaller],
  exports: [RouteCaller],
})
export class RouteCallsModule {}
