import { Controller, HttpCode, Post, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../core/errors/gateway-error.js';
import { sendCompressible } from '../core/http/compression.js';
import { writeBodyKind } from '../core/http/write-body.js';
import { parseBatchCall } from './batch-request.js';
import { BatchService } from './batch.service.js';

/**
 * `POST /batch`: several GETs in one call. Any authenticated consumer may batch; each item is then
 * authorised on its own (an item of an interface the consumer may not use gets its own 403).
 */
@Controller()
export class BatchController {
  constructor(private readonly batch: BatchService) {}

  @Post('batch')
  @HttpCode(200)
  async run(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    // A batch is JSON: `text/plain` (what a page's fetch sends by default, without a preflight) is refused.
    if (writeBodyKind(req.headers['content-type']) !== 'json')
      throw new GatewayError('UNSUPPORTED_FORMAT', {
        parameter: 'Content-Type',
        message: 'POST /batch takes a JSON body: send Content-Type: application/json.',
      });
    const call = parseBatchCall(req.body, this.batch.limits);
    // The guards have authenticated the consumer; quota, permission and validation then run per item.
    const consumer = req.consumer;
    if (!consumer) throw new GatewayError('UNAUTHENTICATED');
    const lang = req.headers['accept-language'];
    const result = await this.batch.run(call, {
      consumer,
      requestId: String(req.id),
      acceptLanguage: typeof lang === 'string' ? lang : undefined,
      trace: req.trace,
    });
    sendCompressible(
      reply
        .code(200)
        .header('content-type', 'application/json; charset=utf-8')
        .header('cache-control', 'no-store'),
      JSON.stringify(result),
    );
  }
}
