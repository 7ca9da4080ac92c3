import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { ATRIUM_CONFIG, type AtriumConfig } from '../../config/atrium-config.js';
import { ErrorShapeRegistry } from '../../core/errors/error-shape.registry.js';
import { SecretRedactor } from '../../core/logging/secret-redactor.js';
import { ReadinessService } from '../../health/readiness.service.js';
import { HealthModule } from '../../health/health.module.js';
import { ProxyModule } from '../../proxy/proxy.module.js';
import { ProxyService } from '../../proxy/proxy.service.js';
import { createUpstreamController } from '../../proxy/upstream-controller.factory.js';
import type { UpstreamDefinition } from '../../proxy/upstream-definition.js';
import { createEmisAuthController } from '../shared/emis-auth.controller.js';
import { emisDefinition } from '../shared/emis-definition.js';
import { emisErrorShape } from '../shared/emis-error.shape.js';
import { EmisSessionCredentials } from '../shared/emis-session.credentials.js';
import { DEALS_PREFIXES, DEALS_TITLE, DEALS_UPSTREAM } from './deals.constants.js';
import { DEALS_ROUTES } from './deals.routes.js';

export const DEALS_DEFINITION = Symbol('DealsDefinition');

export function dealsDefinition(config: AtriumConfig, redactor: SecretRedactor): UpstreamDefinition {
  return emisDefinition({
    name: DEALS_UPSTREAM,
    title: DEALS_TITLE,
    prefixes: DEALS_PREFIXES,
    routes: DEALS_ROUTES,
    config,
    redactor,
  });
}

export const DealsController = createUpstreamController({
  name: DEALS_UPSTREAM,
  prefixes: DEALS_PREFIXES,
  routes: DEALS_ROUTES,
});

export const DealsAuthController = createEmisAuthController({
  upstream: DEALS_UPSTREAM,
  prefixes: DEALS_PREFIXES,
});

/** The deal interface (EMIS DealWatch) under `/deals` and its client's own `/dw`. */
@Module({
  imports: [ProxyModule, HealthModule],
  controllers: [DealsAuthController, DealsController],
  providers: [
    {
      provide: DEALS_DEFINITION,
      useFactory: dealsDefinition,
      inject: [ATRIUM_CONFIG, SecretRedactor],
    },
  ],
})
export class DealsModule implements OnModuleInit {
  constructor(
    private readonly proxy: ProxyService,
    private readonly shapes: ErrorShapeRegistry,
    private readonly redactor: SecretRedactor,
    private readonly readiness: ReadinessService,
    @Inject(DEALS_DEFINITION) private readonly definition: UpstreamDefinition,
  ) {}

  onModuleInit(): void {
    this.proxy.register(this.definition);
    this.shapes.register(emisErrorShape(DEALS_PREFIXES, this.redactor));
    const credentials = this.definition.credentials;
    if (credentials instanceof EmisSessionCredentials)
      this.readiness.addUpstreamFacts((name) =>
        name === DEALS_UPSTREAM ? { session: credentials.state() } : {},
      );
  }
}
