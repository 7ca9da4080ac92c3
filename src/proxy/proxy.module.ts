import { Inject, Logger, Module, type OnApplicationBootstrap } from '@nestjs/common';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { SecretRedactor } from '../core/logging/secret-redactor.js';
import { LINK_SIGNER, LinkSigner } from './links/link-signer.js';
import { SignedLinkController } from './links/signed-link.controller.js';
import { ProxyService } from './proxy.service.js';
import { RESPONSE_CACHE_PROVIDERS } from './response-cache.providers.js';
import { ResponseCache } from './response-cache.service.js';
import { UpstreamLimitsService } from './upstream-limits.service.js';

function linkSigner(config: AtriumConfig, redactor: SecretRedactor): LinkSigner {
  const { links } = config;
  // A secret like the upstream keys: scrubbed from every log line and error.
  redactor.register(links.secret);
  return new LinkSigner({ secret: links.secret, ttlSeconds: links.ttlSeconds, publicUrl: links.publicUrl });
}

/**
 * The generic proxy: one pipeline per registered upstream (pipeline.ts), the response cache, the upstream
 * limits (budget, fairness, cooldown, AIMD, breaker, retries) and the signed-link endpoint. Knows no vendor:
 * upstream modules import it and register their definition. Reaches metrics and Redis only through the
 * ports in core/ports (tokens the global MetricsModule and RedisModule provide).
 */
@Module({
  controllers: [SignedLinkController],
  providers: [
    ProxyService,
    UpstreamLimitsService,
    ...RESPONSE_CACHE_PROVIDERS,
    { provide: LINK_SIGNER, useFactory: linkSigner, inject: [ATRIUM_CONFIG, SecretRedactor] },
  ],
  exports: [ProxyService, ResponseCache, UpstreamLimitsService],
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
