import { timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { sha256 } from '../core/auth/consumer-store.service.js';
import { GatewayError } from '../core/errors/gateway-error.js';

/** `Authorization: Bearer …`, `X-Operator-Token` or (its former name) `X-Admin-Token`; never the query. */
function presentedToken(req: FastifyRequest): string | undefined {
  for (const name of ['x-operator-token', 'x-admin-token']) {
    const header = req.headers[name];
    if (typeof header === 'string' && header) return header.trim();
  }
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && /^bearer\s+/i.test(auth)) return auth.replace(/^bearer\s+/i, '').trim();
  return undefined;
}

/**
 * The admin API's credential: the operator token (`ATRIUM_OPERATOR_TOKEN`, the console's too; formerly
 * `ATRIUM_ADMIN_TOKEN`), never a consumer key. Compared as SHA-256 digests with timingSafeEqual (equal
 * lengths, constant time). Without a token the admin API is off (403).
 */
@Injectable()
export class AdminTokenGuard implements CanActivate {
  private digest?: Buffer;

  constructor(
    @Inject(ATRIUM_CONFIG)
    config: Pick<AtriumConfig, 'operatorToken'> &
      Partial<Pick<AtriumConfig, 'operatorTokenFrom' | 'secretFiles'>>,
  ) {
    this.digest = config.operatorToken ? sha256(config.operatorToken) : undefined;
    // A token read from a file is replaced when the file changes (rotation without a restart).
    if (config.operatorTokenFrom)
      config.secretFiles?.live(config.operatorTokenFrom)?.onChange((t) => (this.digest = sha256(t)));
  }

  canActivate(ctx: ExecutionContext): boolean {
    if (!this.digest)
      throw new GatewayError('FORBIDDEN', {
        message: 'The admin API is disabled: ATRIUM_OPERATOR_TOKEN is not set.',
      });
    const token = presentedToken(ctx.switchToHttp().getRequest<FastifyRequest>());
    if (!token)
      throw new GatewayError('UNAUTHENTICATED', {
        message:
          'The admin API needs the operator token (Authorization: Bearer <token> or X-Operator-Token).',
      });
    if (!timingSafeEqual(sha256(token), this.digest))
      throw new GatewayError('UNAUTHENTICATED', { message: 'The operator token is not valid.' });
    return true;
  }
}
