import 'reflect-metadata';
import { request as nodeRequest } from 'node:http';
import type { DynamicModule } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { request as undiciRequest, type Dispatcher } from 'undici';
import { AppModule } from '../../src/app.module.js';
import { loadConfig, type AtriumConfig } from '../../src/config/atrium-config.js';
import { configureApp, createAdapter, NEST_APP_OPTIONS } from '../../src/configure-app.js';
import type { Consumer } from '../../src/core/auth/consumer.js';
import { createLogger } from '../../src/core/logging/logger.factory.js';
import { PinoNestLogger } from '../../src/core/logging/pino-nest.logger.js';
import { recordEnvSecrets } from '../observability/log-capture.js';
import { UPSTREAMS } from '../../src/upstreams/index.js';
import type { UpstreamDeclaration } from '../../src/upstreams/upstream-declaration.js';

export interface GatewayHandle {
  app: NestFastifyApplication;
  url: string;
  close(): Promise<void>;
}

export interface StartGatewayOptions {
  /** Upstream env (`UPSTREAM_MACRO_BASE_URL`, …) and any other settings. */
  env: Record<string, string | undefined>;
  consumers: readonly Consumer[];
  /** Names whose settings point at the sandbox fakes. */
  sandboxed?: readonly string[];
  /** The upstream declarations (default the index's): a test's own upstream beside them. */
  upstreams?: readonly UpstreamDeclaration[];
  /** Modules beside the AppModule (an extra interface under test). */
  imports?: DynamicModule[];
  /** Changes the loaded config before the app is built (settings for an extra interface…). */
  adjustConfig?: (config: AtriumConfig) => AtriumConfig;
  /** The listener's accept backlog (Node's default 511 drops SYNs when 1,000 clients connect at once). */
  backlog?: number;
}

/**
 * Boots the real AppModule on the Fastify adapter on 127.0.0.1:0, exactly as main.ts does, so tests talk
 * HTTP to it like a client would.
 */
export async function startGateway(opts: StartGatewayOptions): Promise<GatewayHandle> {
  // Upstreams a test does not use point at the discard port: configured, never called.
  const upstreams = opts.upstreams ?? UPSTREAMS;
  const unused: Record<string, string> = {};
  for (const name of upstreams.map((u) => u.name.toUpperCase()))
    if (!opts.env[`UPSTREAM_${name}_BASE_URL`]) {
      unused[`UPSTREAM_${name}_BASE_URL`] = 'http://127.0.0.1:9';
      unused[`UPSTREAM_${name}_TOKEN`] = 'unused-test-token';
    }
  recordEnvSecrets(opts.env);
  // Replicas sharing Redis need one link secret (the boot stops without it).
  const link =
    opts.env.REDIS_URL && !opts.env.ATRIUM_LINK_SECRET
      ? { ATRIUM_LINK_SECRET: 'test-fleet-link-secret-0123456789abcdef' }
      : {};
  const loaded = loadConfig(
    { PORT: '0', HOST: '127.0.0.1', ...unused, ...link, ...opts.env },
    upstreams,
    opts.sandboxed ?? [],
  );
  const config = opts.adjustConfig ? opts.adjustConfig(loaded) : loaded;
  // As in main.ts: one pino logger for Nest and the request lines (under Jest it writes to the log capture).
  const logger = createLogger({ level: config.logLevel });
  const mod = await Test.createTestingModule({
    imports: [
      AppModule.forRoot({ config, consumers: opts.consumers, logger, upstreams }),
      ...(opts.imports ?? []),
    ],
  }).compile();
  const app = mod.createNestApplication<NestFastifyApplication>(createAdapter(config), {
    ...NEST_APP_OPTIONS,
    logger: new PinoNestLogger(logger),
  });
  configureApp(app);
  await app.listen({ port: 0, host: '127.0.0.1', backlog: opts.backlog });
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : 0;
  return { app, url: `http://127.0.0.1:${port}`, close: () => app.close() };
}

export interface HttpResult {
  status: number;
  headers: Record<string, string>;
  text: string;
  json: () => any; // eslint-disable-line @typescript-eslint/no-explicit-any -- tests read arbitrary bodies
}

/** A plain HTTP call, as a consumer would make it. */
export async function http(
  url: string,
  options: { method?: Dispatcher.HttpMethod; headers?: Record<string, string>; body?: string | Buffer } = {},
): Promise<HttpResult> {
  const res = await undiciRequest(url, {
    method: options.method ?? 'GET',
    headers: options.headers,
    body: options.body,
  });
  const text = await res.body.text();
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers)) headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
  return { status: res.statusCode, headers, text, json: () => JSON.parse(text) };
}

/** A request whose path is sent byte for byte (no URL normalisation of `..` or `%2e%2e`). */
export function rawGet(
  base: string,
  path: string,
  headers: Record<string, string> = {},
): Promise<HttpResult> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = nodeRequest({ host: hostname, port, path, method: 'GET', headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString();
        const h: Record<string, string> = {};
        for (const [k, v] of Object.entries(res.headers)) h[k] = Array.isArray(v) ? v.join(', ') : String(v);
        resolve({ status: res.statusCode ?? 0, headers: h, text, json: () => JSON.parse(text) });
      });
    });
    req.on('error', reject);
    req.end();
  });
}
