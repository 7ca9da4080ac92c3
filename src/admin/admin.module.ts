import { Inject, Logger, Module, type OnModuleInit } from '@nestjs/common';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { SecretRedactor } from '../core/logging/secret-redactor.js';
import { ProxyModule } from '../proxy/proxy.module.js';
import { AdminTokenGuard } from './admin-token.guard.js';
import { CacheAdminController } from './cache-admin.controller.js';
import { ConsumersAdminController } from './consumers-admin.controller.js';

/** Operator endpoints (`/admin/**`), authenticated with the operator token (`ATRIUM_OPERATOR_TOKEN`). */
@Module({
  imports: [ProxyModule],
  controllers: [CacheAdminController, ConsumersAdminController],
  providers: [AdminTokenGuard],
})
export class AdminModule implements OnModuleInit {
  constructor(
    @Inject(ATRIUM_CONFIG) private readonly config: AtriumConfig,
    private readonly redactor: SecretRedactor,
  ) {}

  onModuleInit(): void {
    // The operator token is a secret like the upstream keys: scrubbed from any log line or error.
    this.redactor.register(this.config.operatorToken);
    if (this.config.operatorTokenFrom)
      this.config.secretFiles.live(this.config.operatorTokenFrom)?.onChange((t) => this.redactor.register(t));
    if (this.config.operatorTokenFrom === 'ATRIUM_ADMIN_TOKEN')
      new Logger('Config').warn(
        'ATRIUM_ADMIN_TOKEN is deprecated: rename it ATRIUM_OPERATOR_TOKEN (one token opens the admin API ' +
          'and the console; the old name will stop working in a later release)',
      );
  }
}
