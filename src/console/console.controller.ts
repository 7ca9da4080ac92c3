import { Controller, Get, Inject, Res, UseGuards } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { Public } from '../core/auth/auth.decorators.js';
import { UsageService } from '../usage/usage.service.js';
import { ConsoleStateService } from './console-state.service.js';
import { CONSOLE_PAGE, type ConsolePage } from './console-page.js';
import { consoleOff, OperatorGuard } from './operator.guard.js';

/**
 * The operator console. The page itself holds no data and loads without a key (it asks for one); its
 * JSON state is behind the operator token. Consumer keys open neither.
 */
@Public()
@Controller('console')
export class ConsoleController {
  constructor(
    private readonly state: ConsoleStateService,
    private readonly operator: OperatorGuard,
    @Inject(CONSOLE_PAGE) private readonly consolePage: ConsolePage | null,
    private readonly usage: UsageService,
  ) {}

  @Get()
  page(@Res() reply: FastifyReply): void {
    if (!this.operator.enabled || !this.consolePage) throw consoleOff();
    void reply
      .header('content-type', 'text/html; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-security-policy', this.consolePage.csp)
      .header('x-content-type-options', 'nosniff')
      .header('x-frame-options', 'DENY')
      .header('referrer-policy', 'no-referrer')
      .send(this.consolePage.html);
  }

  /** Vendor usage per consumer and upstream, today and the last 7 days (null when counting is off). */
  @Get('api/usage')
  @UseGuards(OperatorGuard)
  async apiUsage(@Res() reply: FastifyReply): Promise<void> {
    void reply
      .header('content-type', 'application/json; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .send(JSON.stringify({ usage: await this.usage.summary() }));
  }

  @Get('api/state')
  @UseGuards(OperatorGuard)
  async apiState(@Res() reply: FastifyReply): Promise<void> {
    const state = await this.state.state();
    void reply
      .header('content-type', 'application/json; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .send(JSON.stringify(state));
  }
}
