import { Module, type DynamicModule } from '@nestjs/common';
import { ConfigModule } from '@nestjs/config';
import { AdminModule } from './admin/admin.module.js';
import { BatchModule } from './batch/batch.module.js';
import { ATRIUM_CONFIG, type AtriumConfig } from './config/atrium-config.js';
import { ConsoleModule } from './console/console.module.js';
import type { Consumer } from './core/auth/consumer.js';
import { CoreModule } from './core/core.module.js';
import { CorsModule } from './core/cors/cors.module.js';
import { DatabaseModule } from './database/database.module.js';
import type { AtriumLogger } from './core/logging/logger.factory.js';
import { LoggingModule } from './core/logging/logging.module.js';
import { HealthModule } from './health/health.module.js';
import { MetricsModule } from './metrics/metrics.module.js';
import { ProxyModule } from './proxy/proxy.module.js';
import { RedisModule } from './redis/redis.module.js';
import { TracingModule } from './tracing/tracing.module.js';
import { UsageModule } from './usage/usage.module.js';
import { UPSTREAMS } from './upstreams/index.js';
import type { UpstreamDeclaration } from './upstreams/upstream-declaration.js';
import { UpstreamsModule } from './upstreams/upstreams.module.js';
import { ViewsModule } from './views/views.module.js';
import { UNSERVED_ROUTE_TABLES } from './proxy/unserved.js';
import { WatchModule } from './watch/watch.module.js';

export interface AppOptions {
  readonly config: AtriumConfig;
  readonly consumers: readonly Consumer[];
  /** The pino logger Nest logs through (main.ts); absent → one built from LOG_LEVEL on the default destination. */
  readonly logger?: AtriumLogger;
  /**
   * The upstream interfaces; absent → every one in src/upstreams/index.ts. Those without a configuration
   * (not in ATRIUM_UPSTREAMS) answer 404 UPSTREAM_NOT_CONFIGURED.
   */
  readonly upstreams?: readonly UpstreamDeclaration[];
}

function servedAndUnserved(
  options: AppOptions,
): [readonly UpstreamDeclaration[], readonly UpstreamDeclaration[]] {
  const all = options.upstreams ?? UPSTREAMS;
  const served = (d: UpstreamDeclaration) => options.config.upstreams[d.name] !== undefined;
  return [all.filter(served), all.filter((d) => !served(d))];
}

/** The gateway. Config and consumers are loaded and validated before Nest boots (see main.ts). */
@Module({})
export class AppModule {
  static forRoot(options: AppOptions): DynamicModule {
    return {
      module: AppModule,
      imports: [
        ConfigModule.forRoot({
          isGlobal: true,
          ignoreEnvFile: true,
          load: [() => ({ atrium: options.config })],
        }),
        CoreModule.forRoot(options.consumers),
        LoggingModule.forRoot(options.logger),
        CorsModule,
        MetricsModule,
        ProxyModule,
        HealthModule,
        RedisModule,
        DatabaseModule,
        UsageModule,
        TracingModule,
        UpstreamsModule.forRoot(...servedAndUnserved(options)),
        AdminModule,
        BatchModule,
        ViewsModule,
        WatchModule,
        ConsoleModule,
      ],
      providers: [
        { provide: ATRIUM_CONFIG, useValue: options.config },
        { provide: UNSERVED_ROUTE_TABLES, useValue: servedAndUnserved(options)[1] },
      ],
      exports: [ATRIUM_CONFIG, UNSERVED_ROUTE_TABLES],
      global: true,
    };
  }
}
