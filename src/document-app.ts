import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { NestFactory } from '@nestjs/core';
import { AppModule } from './app.module.js';
import { loadConfig } from './config/atrium-config.js';
import { createAdapter, NEST_APP_OPTIONS } from './configure-app.js';
import { createLogger } from './core/logging/logger.factory.js';
import { UPSTREAM_NAMES, UPSTREAMS } from './upstreams/index.js';

/**
 * The gateway application as the docs see it: every module and route, no server, no upstream connection
 * (placeholder upstream settings, never called). `npm run client:generate` and the docs tests build the
 * OpenAPI document from it without booting a server.
 */
export async function createDocumentApp(
  beforeInit?: (app: NestFastifyApplication) => void,
): Promise<NestFastifyApplication> {
  const env: Record<string, string> = { PORT: '0', HOST: '127.0.0.1', LOG_LEVEL: 'silent' };
  for (const name of UPSTREAM_NAMES) {
    env[`UPSTREAM_${name.toUpperCase()}_BASE_URL`] = 'http://127.0.0.1:9';
    env[`UPSTREAM_${name.toUpperCase()}_TOKEN`] = 'docs-placeholder-token';
  }
  const config = loadConfig(env, UPSTREAMS);
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot({ config, consumers: [], logger: createLogger({ level: 'silent' }) }),
    createAdapter(config),
    { ...NEST_APP_OPTIONS, logger: false, abortOnError: false },
  );
  beforeInit?.(app);
  // Initialised (no server): the interfaces register their routes and the views file is read against them.
  await app.init();
  return app;
}
