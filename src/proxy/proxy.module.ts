import { Global, Module } from '@nestjs/common';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { RESPONSE_CACHE_PROVIDERS } from './cache/cache.providers.js';
import { ResponseCache } from './cache/response-cache.service.js';
import { PIPELINE_SETTINGS, PipelineFactory, type PipelineSettings } from './pipeline.factory.js';
import { ProxyService } from './proxy.service.js';

@Global()
@Module({
  providers: [
    PipelineFactory,
    ProxyService,
    ...RESPONSE_CACHE_PROVIDERS,
    {
      provide: PIPELINE_SETTINGS,
      useFactory: (c: AtriumConfig): PipelineSettings => ({
        defaultRetryAfterSeconds: c.defaultRetryAfterSeconds,
      }),
      inject: [ATRIUM_CONFIG],
    },
  ],
  exports: [ProxyService, PipelineFactory, ResponseCache],
})
export class ProxyModule {}
