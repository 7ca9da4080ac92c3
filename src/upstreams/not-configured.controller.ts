import { All, Controller, Req, type Type } from '@nestjs/common';
import { ApiExcludeController } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { Public } from '../core/auth/auth.decorators.js';
import { GatewayError } from '../core/errors/gateway-error.js';
import { notConfigured } from '../proxy/unserved.js';
import type { UpstreamDeclaration } from './upstream-declaration.js';

/**
 * Every path under the prefixes of the interfaces this deployment does not serve (ATRIUM_UPSTREAMS): one
 * 404 `UPSTREAM_NOT_CONFIGURED` naming the interface, before any key check (the answer says nothing about
 * the caller, and a consumer with a wrong base URL learns why at once). Their routes stay in /docs, marked.
 */
export function createNotConfiguredController(unserved: readonly UpstreamDeclaration[]): Type<unknown> {
  const owner = new Map<string, UpstreamDeclaration>();
  for (const d of unserved) for (const p of d.prefixes) owner.set(p, d);
  const paths = [...owner.keys()].flatMap((p) => [`/${p}`, `/${p}/*`]);

  @ApiExcludeController()
  @Public()
  @Controller()
  class NotConfiguredController {
    @All(paths)
    refuse(@Req() req: FastifyRequest): never {
      const d = owner.get(req.url.split(/[/?]/)[1] ?? '');
      throw d ? notConfigured(d) : new GatewayError('UPSTREAM_NOT_CONFIGURED');
    }
  }
  return NotConfiguredController;
}
