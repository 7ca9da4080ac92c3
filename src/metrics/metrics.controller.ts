import { timingSafeEqual, createHash } from 'node:crypto';
import { Controller, Get, Inject, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiResponse, ApiSecurity, ApiTags } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Registry } from 'prom-client';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { Public } from '../core/auth/auth.decorators.js';
import { GatewayError } from '../core/errors/gateway-error.js';
import { SecretRedactor } from '../core/logging/secret-redactor.js';
import { METRICS_REGISTRY } from '../core/ports/metrics.port.js';

function digest(s: string): Buffer {
  return createHash('sha256').update(s).digest();
}

/**
 * `GET /metrics`, Prometheus text format. Not behind consumer keys (scrapers hold none); behind its own
 * bearer token when `ATRIUM_METRICS_TOKEN` is set.
 */
@Public()
@ApiTags('operations')
@Controller('metrics')
export class MetricsController {
  private tokenDigest?: Buffer;

  constructor(
    @Inject(METRICS_REGISTRY) private readonly registry: Registry,
    @Inject(ATRIUM_CONFIG) config: AtriumConfig,
    redactor: SecretRedactor,
  ) {
    if (config.metricsToken) {
      this.tokenDigest = digest(config.metricsToken);
      // A secret like the upstream keys: scrubbed from every log message and error.
      redactor.register(config.metricsToken);
      // A token read from a file is replaced when the file changes (rotation without a restart).
      config.secretFiles.live('ATRIUM_METRICS_TOKEN')?.onChange((t) => {
        redactor.register(t);
        this.tokenDigest = digest(t);
      });
    }
  }

  @Get()
  @ApiOperation({ summary: 'Prometheus metrics (text exposition format)' })
  @ApiSecurity('metricsToken')
  @ApiProduces('text/plain')
  @ApiResponse({
    status: 200,
    description: 'Metrics in the Prometheus text format.',
    schema: { type: 'string' },
  })
  async scrape(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    if (this.tokenDigest) {
      const auth = req.headers.authorization;
      const presented =
        typeof auth === 'string' && /^bearer\s+/i.test(auth) ? auth.replace(/^bearer\s+/i, '') : '';
      // Digests of equal length, compared in constant time.
      if (!presented || !timingSafeEqual(digest(presented), this.tokenDigest))
        throw new GatewayError('UNAUTHENTICATED', {
          message: 'The metrics endpoint needs its token: Authorization: Bearer <ATRIUM_METRICS_TOKEN>.',
        });
    }
    const text = await this.registry.metrics();
    void reply
      .header('content-type', this.registry.contentType)
      .header('cache-control', 'no-store')
      .send(text);
  }
}
