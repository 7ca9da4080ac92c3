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
import { DOCUMENTS_PREFIXES, DOCUMENTS_TITLE, DOCUMENTS_UPSTREAM } from './documents.constants.js';
import { DOCUMENTS_ROUTES } from './documents.routes.js';

export const DOCUMENTS_DEFINITION = Symbol('DocumentsDefinition');

export function documentsDefinition(config: AtriumConfig, redactor: SecretRedactor): UpstreamDefinition {
  return emisDefinition({
    name: DOCUMENTS_UPSTREAM,
    title: DOCUMENTS_TITLE,
    prefixes: DOCUMENTS_PREFIXES,
    routes: DOCUMENTS_ROUTES,
    config,
    redactor,
  });
}

export const DocumentsController = createUpstreamController({
  name: DOCUMENTS_UPSTREAM,
  prefixes: DOCUMENTS_PREFIXES,
  routes: DOCUMENTS_ROUTES,
});

export const DocumentsAuthController = createEmisAuthController({
  upstream: DOCUMENTS_UPSTREAM,
  prefixes: DOCUMENTS_PREFIXES,
});

/** The document interface (EMIS Documents) under `/documents` and its client's own `/news`. */
@Module({
  imports: [ProxyModule, HealthModule],
  controllers: [DocumentsAuthController, DocumentsController],
  providers: [
    {
      provide: DOCUMENTS_DEFINITION,
      useFactory: documentsDefinition,
      inject: [ATRIUM_CONFIG, SecretRedactor],
    },
  ],
})
export class DocumentsModule implements OnModuleInit {
  constructor(
    private readonly proxy: ProxyService,
    private readonly shapes: ErrorShapeRegistry,
    private readonly redactor: SecretRedactor,
    private readonly readiness: ReadinessService,
    @Inject(DOCUMENTS_DEFINITION) private readonly definition: UpstreamDefinition,
  ) {}

  onModuleInit(): void {
    this.proxy.register(this.definition);
    this.shapes.register(emisErrorShape(DOCUMENTS_PREFIXES, this.redactor));
    const credentials = this.definition.credentials;
    if (credentials instanceof EmisSessionCredentials)
      this.readiness.addUpstreamFacts((name) =>
        name === DOCUMENTS_UPSTREAM ? { session: credentials.state() } : {},
      );
  }
}
