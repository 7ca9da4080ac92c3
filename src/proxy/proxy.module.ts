import { Global, Logger, Module } from '@nestjs/common';
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
  redactor.register(links.secret);
  const sandbox = Object.values(config.upstreams).some((u) => u.sandbox);
  if (links.secretSource === 'random' && !sandbox)
    new Logger('SignedLinks').warn(
      'ATRIUM_LINK_SECRET is not set: download links are signed with a random per-process secret, so only ' +
        'this replica accepts them. Set one shared secret for a fleet.',
    );
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
export class ProxyModule {}
