import { Global, Module } from '@nestjs/common';
import { AdminTokenGuard } from '../admin/admin-token.guard.js';
import { SYSTEM_CLOCK } from '../core/time/clock.js';
import { UsageController } from './usage.controller.js';
import { UsageService } from './usage.service.js';
import { USAGE_CLOCK, USAGE_STAGES } from './usage.tokens.js';

/** Vendor usage per consumer: counting, `/admin/usage`, the `atrium_consumer_*` counters. */
@Global()
@Module({
  controllers: [UsageController],
  providers: [
    UsageService,
    AdminTokenGuard,
    { provide: USAGE_CLOCK, useValue: SYSTEM_CLOCK },
    { provide: USAGE_STAGES, useExisting: UsageService },
  ],
  exports: [UsageService, USAGE_STAGES],
})
export class UsageModule {}
