import { Global, Inject, Module, type DynamicModule, type OnModuleInit } from '@nestjs/common';
import { ATRIUM_CONFIG, type AtriumConfig } from '../../config/atrium-config.js';
import { attachSecretRedactor, createLogger, type AtriumLogger } from './logger.factory.js';
import { ATRIUM_LOGGER } from './logging.tokens.js';
import { RequestLogger } from './request-log.js';
import { SecretRedactor } from './secret-redactor.js';

/**
 * Structured logging: the pino logger (given by main.ts, else built from LOG_LEVEL on the default
 * destination) and the per-request line writer. Once modules have registered their upstream secrets,
 * the logger scrubs them from every message.
 */
@Global()
@Module({})
export class LoggingModule implements OnModuleInit {
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

  constructor(
    @Inject(ATRIUM_LOGGER) private readonly logger: AtriumLogger,
    private readonly redactor: SecretRedactor,
  ) {}

  onModuleInit(): void {
    attachSecretRedactor(this.logger, this.redactor);
  }
}
