import 'reflect-metadata';
import { existsSync } from 'node:fs';
import { Logger } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { pino } from 'pino';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { AppModule } from './app.module.js';
import {
  ConfigError,
  listedUpstreams,
  loadConfig,
  unconfiguredUpstreams,
  type SecretFiles,
} from './config/atrium-config.js';
import { createAdapter, configureApp, NEST_APP_OPTIONS } from './configure-app.js';
import type { Consumer } from './core/auth/consumer.js';
import { ConsumersFileError, loadConsumersFile } from './core/auth/consumer-store.service.js';
import { createLogger } from './core/logging/logger.factory.js';
import { PinoNestLogger } from './core/logging/pino-nest.logger.js';
import { prettyDestination } from './core/logging/pretty-destination.js';
import { DEMO_CONSUMER_ID, demoConsumer, sandboxKey } from './sandbox/demo-consumer.js';
import { sandboxBanner } from './sandbox/sandbox-banner.js';
import { sandboxEnv } from './sandbox-env.js';
import type { Sandbox } from './sandbox/start-sandbox.js';
import { UPSTREAM_NAMES, UPSTREAMS } from './upstreams/index.js';
import { ViewsFileError } from './views/views-file.js';
import { ReadinessService } from './health/readiness.service.js';

async function bootstrap(onListening: () => void): Promise<void> {
  const env: Record<string, string | undefined> = { ...process.env };
  const mode = env.ATRIUM_SANDBOX ?? 'auto';
  const missing = unconfiguredUpstreams(env, UPSTREAMS);
  let sandbox: Sandbox | undefined;
  // `auto` fakes the vendors only when nothing at all is configured (a bare `npm start`): beside any real
  // upstream, a consumers file or ATRIUM_UPSTREAMS, fake data would reach real consumers, so an interface
  // without its settings is either not served or (listed) stops the boot naming what is missing.
  const listed = listedUpstreams(env, UPSTREAM_NAMES);
  const bare = missing.length === UPSTREAM_NAMES.length && !env.ATRIUM_CONSUMERS_FILE && !listed;
  const sandboxed = mode === 'on' ? (listed ?? [...UPSTREAM_NAMES]) : mode === 'auto' && bare ? missing : [];
  if (sandboxed.length > 0) {
    // Sandbox mode: the built-in fakes play the vendors on loopback.
    // Loaded only here: a gateway with real upstreams never holds the fakes and their data in memory.
    const { startSandbox } = await import('./sandbox/start-sandbox.js');
    sandbox = await startSandbox(UPSTREAMS);
    for (const name of sandboxed) Object.assign(env, sandboxEnv(sandbox, name));
  }

  // The sandbox turns the operator console on with a generated token (printed in the banner) unless the
  // operator set one.
  const operatorTokenFromEnv = Boolean(env.ATRIUM_OPERATOR_TOKEN || env.ATRIUM_OPERATOR_TOKEN_FILE);
  if (sandbox && !operatorTokenFromEnv) env.ATRIUM_OPERATOR_TOKEN = sandboxKey('op');

  const config = loadConfig(env, UPSTREAMS, sandboxed);
  let consumers: Consumer[];
  let demoKey: string | undefined;
  if (config.consumersFile) consumers = loadConsumersFile(config.consumersFile, UPSTREAM_NAMES);
  else if (sandbox) {
    demoKey = env.ATRIUM_DEMO_KEY || sandboxKey('demo');
    consumers = [demoConsumer(demoKey, UPSTREAM_NAMES)];
  } else if (config.database || config.redis)
    // Consumers live in the database (or Redis): loaded by ConsumerRegistry before listening.
    consumers = [];
  else
    throw new ConfigError(
      'Invalid configuration: ATRIUM_CONSUMERS_FILE (required outside sandbox mode without DATABASE_URL)',
    );

  // One pino logger for Nest's own messages (boot errors included) and the per-request lines: JSON on
  // stdout, pretty only in development.
  const log = createLogger({
    level: config.logLevel,
    // The sandbox writes its lines synchronously: a person reads this console, and the banner printed after
    // them must really come last (an asynchronous line could land after it).
    destination: config.prettyLogs
      ? await prettyDestination()
      : sandbox
        ? pino.destination({ dest: 1, sync: true })
        : undefined,
  });
  const app = await NestFactory.create<NestFastifyApplication>(
    AppModule.forRoot({ config, consumers, logger: log }),
    createAdapter(config),
    // In the sandbox Nest's boot lines (one per route) stay quiet unless LOG_LEVEL asks for them, so the
    // banner is what a newcomer sees last; request lines keep the configured level.
    {
      ...NEST_APP_OPTIONS,
      logger: new PinoNestLogger(sandbox && !env.LOG_LEVEL ? log.child({}, { level: 'warn' }) : log),
    },
  );
  configureApp(app);
  // The sandbox listens on loopback unless HOST says otherwise: its metrics, docs and demo key are not for
  // the network of whoever tries it on a laptop.
  await app.listen(config.port, sandbox && !env.HOST ? '127.0.0.1' : config.host);
  onListening();
  const logger = new Logger('Atrium');
  watchSecretFiles(config.secretFiles);
  for (const w of config.warnings)
    new Logger('Config').warn(`${w}; ATRIUM_CONFIG_STRICT=1 stops the boot on it`);
  if (existsSync('.env') && !process.execArgv.some((a) => a.startsWith('--env-file')))
    new Logger('Config').warn(
      'a .env file is in the working directory but nothing reads it: start with node --env-file=.env dist/main.js',
    );
  const address = app.getHttpServer().address();
  const port = typeof address === 'object' && address ? address.port : config.port;
  if (sandbox) {
    logger.warn(`SANDBOX MODE: ${sandboxed.join(', ')} served by built-in fake upstreams on loopback.`);
    // Log lines are written asynchronously: flush them so the banner really is the last thing printed.
    await new Promise<void>((resolve) => log.flush(() => resolve()));
    process.stdout.write(
      sandboxBanner({
        base: `http://127.0.0.1:${port}`,
        consumerId: demoKey ? DEMO_CONSUMER_ID : undefined,
        demoKey,
        operatorToken: config.operatorToken,
        operatorTokenFromEnv,
        sandboxed,
      }),
    );
  } else logger.log(`Atrium listening on port ${port}`);

  // A rollout's stop (SIGTERM): unready at once, so the load balancer (or Kubernetes' endpoints) stops
  // sending new requests; still serving for the drain delay, as the balancer may send a few until its next
  // probe; then stop accepting, finish what is in flight, close idle keep-alive connections, and run the
  // shutdown hooks (leases and budget share released, usage and traces flushed, Redis closed). SIGINT (a
  // developer's Ctrl-C) skips the delay. Bound: ATRIUM_DRAIN_DELAY_MS + ATRIUM_SHUTDOWN_GRACE_MS.
  let closing = false;
  const readiness = app.get(ReadinessService);
  const shutdown = (signal: string) => {
    if (closing) return;
    closing = true;
    readiness.drain();
    const delayMs = signal === 'SIGTERM' ? config.drainDelayMs : 0;
    logger.log(
      `${signal}: unready; serving for ${delayMs} ms more, then draining in-flight requests (at most ${config.shutdownGraceMs} ms)`,
    );
    const force = setTimeout(() => {
      logger.error('shutdown grace period over; exiting');
      process.exit(1);
    }, delayMs + config.shutdownGraceMs);
    force.unref();
    void (async () => {
      try {
        if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
        await app.close();
        config.secretFiles.close();
        await sandbox?.close();
        // The log is written asynchronously: its last lines reach stdout before the process ends.
        await new Promise<void>((resolve) => log.flush(() => resolve()));
        process.exit(0);
      } catch (err) {
        logger.error(`shutdown failed: ${err instanceof Error ? err.message : String(err)}`);
        process.exit(1);
      }
    })();
  };
  process.once('SIGTERM', () => shutdown('SIGTERM'));
  process.once('SIGINT', () => shutdown('SIGINT'));
}

/** Secrets read at boot only: a change of their file is logged, and applies at the next restart. */
const BOOT_ONLY_SECRETS = new Set(['ATRIUM_LINK_SECRET', 'REDIS_URL']);

/**
 * Keeps the secrets read from files current: vendor keys, login passwords and the operator and metrics
 * tokens are used as soon as their file changes (and on SIGHUP); the log names the variable, never a value.
 */
function watchSecretFiles(secrets: SecretFiles): void {
  const log = new Logger('Secrets');
  secrets.watch({
    onChanged: (name) =>
      BOOT_ONLY_SECRETS.has(name)
        ? log.warn(`${name} changed in its file: it applies at the next restart`)
        : log.log(`${name} changed (re-read from its file)`),
    onRefused: (name, reason) => log.warn(`${name}: ${reason}; the value in force stays`),
  });
  process.on('SIGHUP', () => {
    const changed = secrets.rereadAll();
    log.log(`SIGHUP: secret files re-read (${changed.length ? changed.join(', ') : 'no change'})`);
  });
}

/**
 * Starts the gateway (main.ts is the entry point): config, sandbox, consumers, app, listen, signals.
 * `onListening` runs once the server listens. A start-up failure prints why and exits 1.
 */
export function runGateway(onListening: () => void): void {
  bootstrap(onListening).catch(failed);
}

function failed(err: unknown): never {
  if (err instanceof ConfigError || err instanceof ConsumersFileError || err instanceof ViewsFileError) {
    process.stderr.write(`atrium: ${err.message}\n`);
  } else {
    process.stderr.write(
      `atrium: failed to start: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}\n`,
    );
  }
  process.exit(1);
}
