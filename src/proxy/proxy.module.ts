import { Global, Module } from '@nestjs/common';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { PIPELINE_SETTINGS, PipelineFactory, type PipelineSettings } from './pipeline.factory.js';
import { ProxyService } from './proxy.service.js';

@Global()
@Module({
  providers: [
    PipelineFactory,
    ProxyService,
    {
      provide: PIPELINE_SETTINGS,
      useFactory: (c: AtriumConfig): PipelineSettings => ({
        defaultRetryAfterSeconds: c.defaultRetryAfterSeconds,
      }),
      inject: [ATRIUM_CONFIG],
    },
  ],
  exports: [ProxyService, PipelineFactory],
})
export class ProxyModule {}
