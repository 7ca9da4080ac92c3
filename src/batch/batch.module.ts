import { Module } from '@nestjs/common';
import { BatchController } from './batch.controller.js';
import { BatchService } from './batch.service.js';

/** `POST /batch` (README "Batch calls"). */
@Module({ controllers: [BatchController], providers: [BatchService], exports: [BatchService] })
export class BatchModule {}
