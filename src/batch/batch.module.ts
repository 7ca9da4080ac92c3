import { Module } from '@nestjs/common';
import { ProxyModule } from '../proxy/proxy.module.js';
import { BatchController } from './batch.controller.js';
import { BatchService } from './batch.service.js';

/** `POST /batch` (README "Batch calls"). */
@Module({
  imports: [ProxyModule],
  controllers: [BatchController],
  providers: [BatchService],
  exports: [BatchService],
})
export class BatchModule {}
