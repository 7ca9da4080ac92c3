import { Inject, Module, type DynamicModule, type OnModuleInit, type Type } from '@nestjs/common';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { ErrorShapeRegistry } from '../core/errors/error-shape.registry.js';
import { SecretRedactor } from '../core/logging/secret-redactor.js';
import { ProxyModule } from '../proxy/proxy.module.js';
import { ProxyService } from '../proxy/proxy.service.js';
import { createUpstreamController } from '../proxy/upstream-controller.factory.js';
import { createNotConfiguredController } from './not-configured.controller.js';
import { upstreamDefinitionOf, type UpstreamDeclaration } from './upstream-declaration.js';

const UPSTREAM_DECLARATIONS = Symbol('UpstreamDeclarations');

// One generated controller class per declaration, served or not, however many apps a process builds (tests
// build many).
const generated = new WeakMap<UpstreamDeclaration, Type<unknown>>();
const notServed = new WeakMap<UpstreamDeclaration, Type<unknown>>();

function controllersOf(d: UpstreamDeclaration): Type<unknown>[] {
  let routes = generated.get(d);
  if (!routes) {
    routes = createUpstreamController(d);
    generated.set(d, routes);
  }
  return [...(d.controllers ?? []), routes];
}

/** The routes of an interface not served: in /docs, each answering 404 UPSTREAM_NOT_CONFIGURED. */
function notServedControllerOf(d: UpstreamDeclaration): Type<unknown> {
  let routes = notServed.get(d);
  if (!routes) {
    routes = createUpstreamController(d, false);
    notServed.set(d, routes);
  }
  return routes;
}

/**
 * Every upstream interface, from its declaration: its controllers (hand-written ones, then the one
 * generated from its route table), its pipeline (registered with the proxy) and the vendor shape of its
 * error bodies; readiness pulls each definition's `readinessFacts` from the proxy. No upstream has a module
 * of its own.
 */
@Module({})
export class UpstreamsModule implements OnModuleInit {
  /**
   * `served` get their controllers and pipelines; `unserved` (not in ATRIUM_UPSTREAMS) keep their routes
   * (in /docs, marked), each answering 404 UPSTREAM_NOT_CONFIGURED, as does every other path under their
   * prefixes.
   */
  static forRoot(
    served: readonly UpstreamDeclaration[],
    unserved: readonly UpstreamDeclaration[] = [],
  ): DynamicModule {
    return {
      module: UpstreamsModule,
      imports: [ProxyModule],
      controllers: [
        ...served.flatMap(controllersOf),
        ...unserved.map(notServedControllerOf),
        ...(unserved.length ? [createNotConfiguredController(unserved)] : []),
      ],
      providers: [{ provide: UPSTREAM_DECLARATIONS, useValue: served }],
    };
  }

  constructor(
    private readonly proxy: ProxyService,
    private readonly shapes: ErrorShapeRegistry,
    private readonly redactor: SecretRedactor,
    @Inject(ATRIUM_CONFIG) private readonly config: AtriumConfig,
    @Inject(UPSTREAM_DECLARATIONS) private readonly upstreams: readonly UpstreamDeclaration[],
  ) {}

  onModuleInit(): void {
    const ctx = { redactor: this.redactor };
    for (const d of this.upstreams) {
      const def = upstreamDefinitionOf(d, this.config, ctx);
      this.proxy.register(def);
      if (d.errorShape) this.shapes.register({ prefixes: d.prefixes, extend: d.errorShape(ctx) });
    }
  }
}
