import { Controller, Get, Req, Res } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiQuery } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { PassThrough } from 'node:stream';
import { GatewayError } from '../core/errors/gateway-error.js';
import { queryPairsOf } from '../core/http/query-string.js';
import { WatchService } from './watch.service.js';

const EVENT_STREAM = /(^|,)\s*(text\/event-stream|text\/\*|\*\/\*)\s*(;|,|$)/i;

/**
 * `GET /watch?path=…` (repeatable): a stream of Server-Sent Events with each path's answer, then each new
 * one. Any authenticated consumer may watch (the global guards count the call against its quota); each
 * path is then read as that consumer, so its permissions and validation apply per path.
 */
@Controller('watch')
export class WatchController {
  constructor(private readonly watch: WatchService) {}

  @ApiOperation({
    summary:
      'Watch paths for changes (Server-Sent Events): events `answer` (id: the ETags), `unchanged`, `error` (a refused path, first).',
  })
  @ApiQuery({
    name: 'path',
    type: String,
    isArray: true,
    description:
      'A gateway path with its query, URL-encoded (repeatable): /macro/series/1/data, /views/<name>?…',
    required: true,
  })
  @ApiQuery({
    name: 'lastEventId',
    type: String,
    required: false,
    description: 'As the Last-Event-ID header, for a first connection that already has answers.',
  })
  @ApiProduces('text/event-stream')
  @Get()
  async stream(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    const consumer = req.consumer;
    if (!consumer) throw new GatewayError('UNAUTHENTICATED');
    const accept = req.headers.accept;
    if (accept && !EVENT_STREAM.test(accept))
      throw new GatewayError('UNSUPPORTED_FORMAT', {
        message: 'GET /watch answers Server-Sent Events: send Accept: text/event-stream.',
      });
    const query = queryPairsOf(req);
    const paths = query.filter(([k]) => k === 'path').map(([, v]) => v);
    const header = req.headers['last-event-id'];
    const lastEventId = typeof header === 'string' ? header : query.find(([k]) => k === 'lastEventId')?.[1];
    const out = new PassThrough();
    // Caps and the path list are checked here: past them the client gets the envelope, not a stream.
    const closed = await this.watch.open(
      { consumer, paths, requestId: String(req.id), ...(lastEventId ? { lastEventId } : {}) },
      out,
    );
    // The client may have gone while the fleet's count was read.
    if (req.raw.destroyed || reply.raw.destroyed) closed();
    else reply.raw.on('close', closed);
    void reply
      .code(200)
      .header('content-type', 'text/event-stream; charset=utf-8')
      .header('cache-control', 'no-cache, no-store')
      // nginx would otherwise hold events back until its buffer fills.
      .header('x-accel-buffering', 'no')
      .send(out);
  }
}
