import { Module } from '@nestjs/common';
import { ProxyModule } from '../proxy/proxy.module.js';
import { RouteCallsModule } from '../route-calls/route-calls.module.js';
import { BatchController } from './batch.controller.js';
import { BatchService } from './batch.service.js';

/** `POST /batch` (README "Batch calls"). */
@Module({
  imports: [RouteCallsModule, ProxyModule],
  controllers: [BatchController],
  providers: [BatchService],
  exports: [BatchService],
})
export class BatchModule {}
