import { timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { sha256 } from '../core/auth/consumer-store.service.js';
import { GatewayError } from '../core/errors/gateway-error.js';

function presentedToken(req: FastifyRequest): string | undefined {
  const header = req.headers['x-admin-token'];
  if (typeof header === 'string' && header) return header;
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && /^bearer\s+/i.test(auth)) return auth.replace(/^bearer\s+/i, '').trim();
  return undefined;
}

/**
 * The admin API's own credential: the operator token from `ATRIUM_ADMIN_TOKEN`, never a consumer key.
 * Compared as SHA-256 digests with timingSafeEqual (equal lengths, constant time). Without the variable the
 * admin API is off.
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private readonly digest?: Buffer;

  constructor(@Inject(ATRIUM_CONFIG) config: AtriumConfig) {
    this.digest = config.adminToken ? sha256(config.adminToken) : undefined;
  }

  canActivate(ctx: ExecutionContext): boolean {
    if (!this.digest)
      throw new GatewayError('FORBIDDEN', {
        message: 'The admin API is disabled: ATRIUM_ADMIN_TOKEN is not set.',
      });
    const token = presentedToken(ctx.switchToHttp().getRequest<FastifyRequest>());
    if (!token)
      throw new GatewayError('UNAUTHENTICATED', {
        message: 'The admin API needs the operator token (Authorization: Bearer <token> or X-Admin-Token).',
      });
    if (!timingSafeEqual(sha256(token), this.digest))
      throw new GatewayError('UNAUTHENTICATED', { message: 'The operator token is not valid.' });
    return true;
  }
}
