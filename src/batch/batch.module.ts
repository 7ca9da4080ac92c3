import { Module } from '@nestjs/common';
import { RouteCallsModule } from '../route-calls/route-calls.module.js';
import { BatchController } from './batch.controller.js';
import { BatchService } from './batch.service.js';

/** `POST /batch` (README "Batch calls"). */
@Module({
  imports: [RouteCallsModule],
  controllers: [BatchController],
  providers: [BatchService],
  exports: [BatchService],
})
export class BatchModule {}
