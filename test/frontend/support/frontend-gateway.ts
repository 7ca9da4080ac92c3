import 'reflect-metadata';
import { Inject, Module, type DynamicModule, type OnModuleInit } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { Test } from '@nestjs/testing';
import { AppModule } from '../../../src/app.module.js';
import { ATRIUM_CONFIG, loadConfig, type AtriumConfig } from '../../../src/config/atrium-config.js';
import { configureApp, createAdapter, NEST_APP_OPTIONS } from '../../../src/configure-app.js';
import type { Consumer } from '../../../src/core/auth/consumer.js';
import type { RouteDefinition } from '../../../src/proxy/pipeline.types.js';
import { ProxyService } from '../../../src/proxy/proxy.service.js';
import { createUpstreamController } from '../../../src/proxy/upstream-controller.factory.js';
import { QueryTokenCredentials } from '../../../src/upstreams/shared/static-token.credentials.js';
import { macroDefinition } from '../../../src/upstreams/macro/macro.module.js';
import { MACRO_ROUTES } from '../../../src/upstreams/macro/macro.routes.js';
import type { GatewayHandle } from '../../helpers/gateway.js';

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
  @Module({ controllers: [LabsController] })
  class LabsModule implements OnModuleInit {
    constructor(
      private readonly proxy: ProxyService,
      @Inject(ATRIUM_CONFIG) private readonly config: AtriumConfig,
    ) {}

    onModuleInit(): void {
      const macro = macroDefinition(this.config);
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

export interface FrontendGatewayOptions {
  env: Record<string, string | undefined>;
  consumers: readonly Consumer[];
  /** Extra modules beside the AppModule (the labs interface). */
  imports?: DynamicModule[];
  /**
   * Config entries for extra interfaces, copied from macro's (budget, timeouts, limits…) with their own
   * base URL, so every per-upstream part of the gateway finds its settings.
   */
  extraUpstreams?: Record<string, { baseUrl: string }>;
}

/** As test/helpers/gateway.ts startGateway, with extra modules. */
export async function startFrontendGateway(opts: FrontendGatewayOptions): Promise<GatewayHandle> {
  const unused: Record<string, string> = {};
  for (const name of ['MACRO', 'COMPANY', 'DOCUMENTS', 'DEALS'])
    if (!opts.env[`UPSTREAM_${name}_BASE_URL`]) {
      unused[`UPSTREAM_${name}_BASE_URL`] = 'http://127.0.0.1:9';
      unused[`UPSTREAM_${name}_TOKEN`] = 'unused-test-token';
    }
  const loaded = loadConfig({ PORT: '0', HOST: '127.0.0.1', ...unused, ...opts.env });
  const extra = Object.fromEntries(
    Object.entries(opts.extraUpstreams ?? {}).map(([name, u]) => [
      name,
      { ...loaded.upstreams.macro, name, baseUrl: u.baseUrl, sandbox: false },
    ]),
  );
  const config = { ...loaded, upstreams: { ...loaded.upstreams, ...extra } } as AtriumConfig;
  const mod = await Test.createTestingModule({
    imports: [AppModule.forRoot({ config, consumers: opts.consumers }), ...(opts.imports ?? [])],
  }).compile();
  const app = mod.createNestApplication<NestFastifyApplication>(createAdapter(config), {
    ...NEST_APP_OPTIONS,
    logger: false,
  });
  configureApp(app);
  await app.listen(0, '127.0.0.1');
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { app, url: `http://127.0.0.1:${port}`, close: () => app.close() };
}
