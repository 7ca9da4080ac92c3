import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { ATRIUM_CONFIG, type AtriumConfig } from '../../config/atrium-config.js';
import { ErrorShapeRegistry } from '../../core/errors/error-shape.registry.js';
import { ProxyModule } from '../../proxy/proxy.module.js';
import { ProxyService } from '../../proxy/proxy.service.js';
import { createUpstreamController } from '../../proxy/upstream-controller.factory.js';
import type { UpstreamDefinition } from '../../proxy/upstream-definition.js';
import { QueryTokenCredentials } from '../shared/static-token.credentials.js';
import { macroErrorMapper } from './macro-error.mapper.js';
import { macroErrorShape } from './macro-error.shape.js';
import { MacroLoginController } from './macro-login.controller.js';
import { MACRO_LANGUAGES, MACRO_TITLE, MACRO_UPSTREAM } from './macro.constants.js';
import { MACRO_DOCS } from './macro.route-docs.js';
import { MACRO_ROUTES } from './macro.routes.js';

export const MACRO_DEFINITION = Symbol('MacroDefinition');

export function macroDefinition(config: AtriumConfig): UpstreamDefinition {
  const u = config.upstreams.macro;
  return {
    name: MACRO_UPSTREAM,
    title: MACRO_TITLE,
    prefixes: ['macro'],
    routes: MACRO_ROUTES,
    languages: MACRO_LANGUAGES,
    defaultLanguage: 'en',
    errorMapper: macroErrorMapper,
    // The vendor documents `token` in the query for every operation (spec §5).
    credentials: new QueryTokenCredentials('token', u.token!),
    timeoutMs: u.timeoutMs,
    transport: {
      baseUrl: u.baseUrl,
      connections: u.connections,
      keepAliveTimeoutMs: 30_000,
      connectTimeoutMs: u.connectTimeoutMs,
      headersTimeoutMs: u.timeoutMs,
      bodyTimeoutMs: u.timeoutMs,
      maxResponseBytes: config.maxResponseBytes,
    },
  };
}

export const MacroController = createUpstreamController({
  name: MACRO_UPSTREAM,
  prefixes: ['macro'],
  routes: MACRO_ROUTES,
  docs: MACRO_DOCS,
});

/** The macroeconomic interface (CEIC v2) under `/macro`. */
@Module({
  imports: [ProxyModule],
  controllers: [MacroLoginController, MacroController],
  providers: [{ provide: MACRO_DEFINITION, useFactory: macroDefinition, inject: [ATRIUM_CONFIG] }],
})
export class MacroModule implements OnModuleInit {
  constructor(
    private readonly proxy: ProxyService,
    private readonly shapes: ErrorShapeRegistry,
    @Inject(MACRO_DEFINITION) private readonly definition: UpstreamDefinition,
  ) {}

  onModuleInit(): void {
    this.proxy.register(this.definition);
    this.shapes.register(macroErrorShape);
  }
}
