import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { SecretRedactor } from '../core/logging/secret-redactor.js';
import { ProxyModule } from '../proxy/proxy.module.js';
import { AdminTokenGuard } from './admin-token.guard.js';
import { CacheAdminController } from './cache-admin.controller.js';

/** Operator endpoints (`/admin/**`), authenticated with `ATRIUM_ADMIN_TOKEN`. */
@Module({ imports: [ProxyModule], controllers: [CacheAdminController], providers: [AdminTokenGuard] })
export class AdminModule implements OnModuleInit {
  constructor(
    @Inject(ATRIUM_CONFIG) private readonly config: AtriumConfig,
    private readonly redactor: SecretRedactor,
  ) {}

  onModuleInit(): void {
    // The operator token is a secret like the upstream keys: scrubbed from any log line or error.
    this.redactor.register(this.config.adminToken);
  }
}
