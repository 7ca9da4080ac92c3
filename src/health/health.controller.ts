import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { Public } from '../core/auth/auth.decorators.js';
import { ReadinessService } from './readiness.service.js';

@Public()
@Controller('health')
export class HealthController {
  constructor(
    private readonly readiness: ReadinessService,
    @Inject(ATRIUM_CONFIG) private readonly config: AtriumConfig,
  ) {}

  /** Liveness: the process answers. No upstream or Redis calls. */
  @Get('live')
  live(): { status: 'ok' } {
    return { status: 'ok' };
  }

  /**
   * Readiness: 503 only when this replica cannot serve (a required check, shutting down); upstreams in
   * trouble are reported per upstream (`degraded`) with 200. Reachability is a TCP connect, no quota spent.
   */
  @Get('ready')
  async ready(@Res() reply: FastifyReply): Promise<void> {
    const report = await this.readiness.check();
    void reply
      .code(report.ready ? 200 : 503)
      .header('cache-control', 'no-store')
      .send({ ...report, sandbox: Object.values(this.config.upstreams).some((u) => u.sandbox) });
  }
}
