import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiParam } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { GatewayError } from '../core/errors/gateway-error.js';
import { sendCompressible } from '../core/http/compression.js';
import { queryPairsOf } from '../core/http/query-string.js';
import { ViewsService, type ViewResult } from './views.service.js';

/** Header that says whether every part answered (as KrakenD's `X-KrakenD-Completed`). */
export const COMPLETE_HEADER = 'x-atrium-complete';

/**
 * `GET /views` (the views, their parameters and an example URL each) and `GET /views/{name}` (one
 * composed answer). Any authenticated consumer may call a view (the global guards count it against the
 * consumer's quota); each part is then authorised, counted and validated on its own.
 */
@Controller('views')
export class ViewsController {
  constructor(private readonly views: ViewsService) {}

  @Get()
  list(@Res() reply: FastifyReply): void {
    void reply
      .header('content-type', 'application/json; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(JSON.stringify({ views: this.views.list() }));
  }

  // Each view is also documented as an operation of its own, with its parameters (view-docs.ts).
  @ApiOperation({
    summary: 'Any view by name (GET /views lists them); the view operations below are the typed form.',
  })
  @ApiParam({ name: 'name', description: 'The view name, e.g. company-overview.' })
  @Get(':name')
  async run(
    @Param('name') name: string,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const consumer = req.consumer;
    if (!consumer) throw new GatewayError('UNAUTHENTICATED');
    const lang = req.headers['accept-language'];
    const inm = req.headers['if-none-match'];
    const result = await this.views.run({
      name,
      query: queryPairsOf(req),
      // The parts run as the same consumer: quota, permission and validation run per part.
      caller: { consumer, ...(typeof lang === 'string' ? { acceptLanguage: lang } : {}), trace: req.trace },
      requestId: String(req.id),
      ...(typeof inm === 'string' ? { ifNoneMatch: inm } : {}),
    });
    send(reply, result);
  }
}

function send(reply: FastifyReply, result: ViewResult): void {
  reply
    .header(COMPLETE_HEADER, result.complete ? 'true' : 'false')
    .header('cache-control', 'private, no-cache');
  if (result.etag) reply.header('etag', result.etag);
  if (result.retryAfter) reply.header('retry-after', result.retryAfter);
  if (result.notModified) {
    void reply.code(304).send();
    return;
  }
  sendCompressible(
    reply.code(result.status).header('content-type', 'application/json; charset=utf-8'),
    result.body,
  );
}
