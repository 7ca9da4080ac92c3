import { Global, Module, type DynamicModule } from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_PIPE } from '@nestjs/core';
import type { Consumer } from './auth/consumer.js';
import {
  ConsumerAuthGuard,
  CONSUMER_STORE,
  TOKEN_VERIFIER,
  UpstreamAccessGuard,
} from './auth/consumer-auth.guard.js';
import { ConsumerRegistry } from './auth/consumer-registry.service.js';
import { ConsumerStore } from './auth/consumer-store.service.js';
import { TokenVerifier } from './auth/token-verifier.js';
import { ErrorShapeRegistry } from './errors/error-shape.registry.js';
import { GatewayExceptionFilter } from './errors/gateway-exception.filter.js';
import { CompressedForms } from './http/compression.js';
import { QueryValidationPipe } from './http/query-validation.pipe.js';
import { SecretRedactor } from './logging/secret-redactor.js';
import { ConsumerThrottlerGuard } from './throttling/consumer-throttler.guard.js';
import { ConsumerThrottlingModule } from './throttling/throttling.module.js';

/**
 * Cross-cutting parts every module uses: consumers and the global guards, the query pipe, the error filter,
 * redaction, the kept compressed forms.
 */
@Global()
@Module({})
export class CoreModule {
  static forRoot(consumers: readonly Consumer[]): DynamicModule {
    return {
      module: CoreModule,
      imports: [ConsumerThrottlingModule],
      providers: [
        SecretRedactor,
        ErrorShapeRegistry,
        { provide: CONSUMER_STORE, useValue: new ConsumerStore(consumers) },
        // End-user tokens (JWTs from an OIDC provider) of the consumers that accept them.
        {
          provide: TOKEN_VERIFIER,
          useFactory: (store: ConsumerStore) => new TokenVerifier(store),
          inject: [CONSUMER_STORE],
        },
        // Keeps the store in step with its source: Redis (pub/sub), or the file (SIGHUP, on change).
        ConsumerRegistry,
        // Global guards run in this order: who is calling, that consumer's quota (its headers go on every
        // answer, 403 included), then what the consumer may use.
        { provide: APP_GUARD, useClass: ConsumerAuthGuard },
        { provide: APP_GUARD, useExisting: ConsumerThrottlerGuard },
        { provide: APP_GUARD, useClass: UpstreamAccessGuard },
        // The query parameters of every route, checked by the one compiled validator per route.
        QueryValidationPipe,
        { provide: APP_PIPE, useExisting: QueryValidationPipe },
        GatewayExceptionFilter,
        { provide: APP_FILTER, useExisting: GatewayExceptionFilter },
        // The compressed forms of cached answers, kept for this app's proxied routes.
        CompressedForms,
      ],
      exports: [
        ConsumerThrottlingModule,
        SecretRedactor,
        ErrorShapeRegistry,
        CONSUMER_STORE,
        ConsumerRegistry,
        GatewayExceptionFilter,
        QueryValidationPipe,
        CompressedForms,
      ],
    };
  }
}
