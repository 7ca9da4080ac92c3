import { Global, Inject, Logger, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { SecretRedactor } from '../core/logging/secret-redactor.js';
import { RESPONSE_CACHE_PROVIDERS } from './cache/cache.providers.js';
import { ResponseCache } from './cache/response-cache.service.js';
import { LinkSigner } from './links/link-signer.js';
import { SignedLinkController } from './links/signed-link.controller.js';
import {
  LINK_SIGNER,
  PIPELINE_SETTINGS,
  PipelineFactory,
  type PipelineSettings,
} from './pipeline.factory.js';
import { ProxyService } from './proxy.service.js';

function linkSigner(config: AtriumConfig, redactor: SecretRedactor): LinkSigner {
  const { links } = config;
  // A secret like the upstream keys: scrubbed from every log line and error.
  redactor.register(links.secret);
  return new LinkSigner({ secret: links.secret, ttlSeconds: links.ttlSeconds, publicUrl: links.publicUrl });
}

@Global()
@Module({
  controllers: [SignedLinkController],
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
    { provide: LINK_SIGNER, useFactory: linkSigner, inject: [ATRIUM_CONFIG, SecretRedactor] },
  ],
  exports: [ProxyService, PipelineFactory, ResponseCache],
})
export class ProxyModule implements OnApplicationBootstrap {
  constructor(@Inject(ATRIUM_CONFIG) private readonly config: AtriumConfig) {}

  onApplicationBootstrap(): void {
    const sandbox = Object.values(this.config.upstreams).some((u) => u.sandbox);
    if (this.config.links.secretSource === 'random' && !sandbox)
      new Logger('SignedLinks').warn(
        'ATRIUM_LINK_SECRET is not set: download links are signed with a random per-process secret, so ' +
          'only this replica accepts them. Set one shared secret for a fleet.',
      );
  }
}
