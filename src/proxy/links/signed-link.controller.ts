import { Controller, Get, Param, Req, Res } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Public } from '../../core/auth/auth.decorators.js';
import { ProxyService, sendProxyResponse } from '../proxy.service.js';

/**
 * `GET /links/<upstream>/<file name>?t=…`: follows a gateway-signed download link (LinkSigner). Public: the
 * signed link is the capability, as the vendor's own link was, and carries no key of any kind. Left out of
 * the OpenAPI document: nobody builds these URLs, the gateway hands them out.
 */
@Public()
@ApiExcludeController()
@Controller('links')
export class SignedLinkController {
  constructor(private readonly proxy: ProxyService) {}

  @Get(':upstream/*')
  async follow(
    @Param('upstream') upstream: string,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const t = (req.query as Record<string, unknown> | undefined)?.t;
    const accept = req.headers.accept;
    const link = await this.proxy.followLink(upstream, t, {
      requestId: String(req.id),
      accept: typeof accept === 'string' ? accept : undefined,
      trace: req.trace,
    });
    sendProxyResponse(reply, link);
  }
}
