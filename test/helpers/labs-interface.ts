import 'reflect-metadata';
import { Inject, Module, type DynamicModule, type OnModuleInit } from '@nestjs/common';
import { ATRIUM_CONFIG, type AtriumConfig } from '../../src/config/atrium-config.js';
import type { RouteDefinition } from '../../src/proxy/pipeline.types.js';
import { ProxyModule } from '../../src/proxy/proxy.module.js';
import { ProxyService } from '../../src/proxy/proxy.service.js';
import { createUpstreamController } from '../../src/proxy/upstream-controller.factory.js';
import { QueryTokenCredentials } from '../../src/upstreams/shared/static-token.credentials.js';
import { SecretRedactor } from '../../src/core/logging/secret-redactor.js';
import { macroUpstream } from '../../src/upstreams/macro/macro.upstream.js';
import { upstreamDefinitionOf } from '../../src/upstreams/upstream-declaration.js';
import { MACRO_ROUTES } from '../../src/upstreams/macro/macro.routes.js';

/**
 * A second interface, `/labs/**`, that speaks the macro vendor's protocol against its own fake: lets the
 * front-end tests mix two interfaces in one batch whatever other interfaces are built yet. Its route
 * objects are copies, so the macro pipeline's routes stay its own.
 */
export const LABS_ROUTES: readonly RouteDefinition[] = MACRO_ROUTES.map((r) => ({
  ...r,
  id: r.id.replace(/^macro\./, 'labs.'),
}));

export function labsModule(baseUrl: string, token: string): DynamicModule {
  const LabsController = createUpstreamController({ name: 'labs', prefixes: ['labs'], routes: LABS_ROUTES });
  @Module({ imports: [ProxyModule], controllers: [LabsController] })
  class LabsModule implements OnModuleInit {
    constructor(
      private readonly proxy: ProxyService,
      @Inject(ATRIUM_CONFIG) private readonly config: AtriumConfig,
    ) {}

    onModuleInit(): void {
      const macro = upstreamDefinitionOf(macroUpstream, this.config, { redactor: new SecretRedactor() });
      this.proxy.register({
        ...macro,
        name: 'labs',
        title: 'the labs data service',
        prefixes: ['labs'],
        routes: LABS_ROUTES,
        credentials: new QueryTokenCredentials('token', token),
        transport: { ...macro.transport, baseUrl },
      });
    }
  }
  return { module: LabsModule };
}

/**
 * For startGateway's `adjustConfig`: config entries for extra interfaces, copied from macro's (budget,
 * timeouts, limits…) with their own base URL, so every per-upstream part of the gateway finds its settings.
 */
export function withExtraUpstreams(
  extra: () => Record<string, { baseUrl: string }>,
): (loaded: AtriumConfig) => AtriumConfig {
  return (loaded) => {
    const upstreams = Object.fromEntries(
      Object.entries(extra()).map(([name, u]) => [
        name,
        { ...loaded.upstreams.macro, name, baseUrl: u.baseUrl, sandbox: false },
      ]),
    );
    return { ...loaded, upstreams: { ...loaded.upstreams, ...upstreams } };
  };
}
