import { Global, Module, type DynamicModule, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { ATRIUM_CONFIG, type AtriumConfig } from '../../config/atrium-config.js';
import {
  createLogger,
  registerLogRedactor,
  unregisterLogRedactor,
  type AtriumLogger,
} from './logger.factory.js';
import { ATRIUM_LOGGER } from './logging.tokens.js';
import { RequestLogger } from './request-log.js';
import { SecretRedactor } from './secret-redactor.js';

/**
 * Structured logging: the pino logger (given by main.ts, else built from LOG_LEVEL on the default
 * destination) and the per-request line writer. While the app lives, every logger scrubs the upstream
 * secrets its SecretRedactor holds from every message.
 */
@Global()
@Module({})
export class LoggingModule implements OnModuleInit, OnModuleDestroy {
  static forRoot(logger?: AtriumLogger): DynamicModule {
    return {
      module: LoggingModule,
      providers: [
        {
          provide: ATRIUM_LOGGER,
          useFactory: (config: AtriumConfig): AtriumLogger =>
            logger ?? createLogger({ level: config.logLevel }),
          inject: [ATRIUM_CONFIG],
        },
        RequestLogger,
      ],
      exports: [ATRIUM_LOGGER, RequestLogger],
    };
  }

  constructor(private readonly redactor: SecretRedactor) {}

  onModuleInit(): void {
    registerLogRedactor(this.redactor);
  }

  onModuleDestroy(): void {
    unregisterLogRedactor(this.redactor);
  }
}
