import { Controller, Get, Param, Req, Res, SetMetadata } from '@nestjs/common';
import { ApiOperation, ApiParam } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DOCS_ONLY_ROUTE } from '../core/ports/docs.port.js';
import { ViewRoutes } from './view-routes.js';
import { ViewsService } from './views.service.js';

export { COMPLETE_HEADER } from './view-routes.js';

/**
 * `GET /views` (the views, their parameters and an example URL each) and `GET /views/{name}` (one
 * composed answer). Any authenticated consumer may call a view; each part is then authorised on its own.
 */
@Controller('views')
export class ViewsController {
  constructor(
    private readonly views: ViewsService,
    private readonly routes: ViewRoutes,
  ) {}

  @Get()
  list(@Res() reply: FastifyReply): void {
    void reply
      .header('content-type', 'application/json; charset=utf-8')
      .header('cache-control', 'no-store')
      .send(JSON.stringify({ views: this.views.list() }));
  }

  // Each view is also documented as an operation of its own, with its parameters (view-docs.ts).
  // Served by ViewRoutes as a plain Fastify route (no Nest router context per call); this handler is what
  // the OpenAPI scan and the policy test read.
  @ApiOperation({
    summary: 'Any view by name (GET /views lists them); the view operations below are the typed form.',
  })
  @ApiParam({ name: 'name', description: 'The view name, e.g. company-overview.' })
  @SetMetadata(DOCS_ONLY_ROUTE, true)
  @Get(':name')
  run(@Param('name') _name: string, @Req() req: FastifyRequest, @Res() reply: FastifyReply): void {
    this.routes.handle(req, reply);
  }
}
