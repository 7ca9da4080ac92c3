import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, type CanActivate, type ExecutionContext } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { GatewayError } from '../core/errors/gateway-error.js';

const digest = (s: string): Buffer => createHash('sha256').update(s).digest();

/** The operator token from `Authorization: Bearer …` or `X-Operator-Token` (never a query parameter). */
export function presentedOperatorToken(req: FastifyRequest): string | undefined {
  const x = req.headers['x-operator-token'];
  if (typeof x === 'string' && x) return x.trim();
  const auth = req.headers.authorization;
  if (typeof auth === 'string' && /^bearer\s+/i.test(auth)) return auth.replace(/^bearer\s+/i, '').trim();
  return undefined;
}

/**
 * Guards the console's data: the operator token (`ATRIUM_OPERATOR_TOKEN`, the admin API's too), compared in constant time as
 * SHA-256 digests (equal lengths whatever was sent). No token configured → the console is off (404).
 * Consumer keys are no operator tokens.
 */
@Injectable()
export class OperatorGuard implements CanActivate {
  private readonly expected?: Buffer;

  constructor(@Inject(ATRIUM_CONFIG) config: Pick<AtriumConfig, 'operatorToken'>) {
    this.expected = config.operatorToken ? digest(config.operatorToken) : undefined;
  }

  get enabled(): boolean {
    return this.expected !== undefined;
  }

  verify(presented: string | undefined): boolean {
    if (!this.expected || presented === undefined) return false;
    return timingSafeEqual(digest(presented), this.expected);
  }

  canActivate(ctx: ExecutionContext): boolean {
    if (!this.enabled) throw consoleOff();
    if (!this.verify(presentedOperatorToken(ctx.switchToHttp().getRequest<FastifyRequest>())))
      throw new GatewayError('UNAUTHENTICATED', { message: 'The operator token is missing or wrong.' });
    return true;
  }
}

export function consoleOff(): GatewayError {
  return new GatewayError('NOT_FOUND', {
    message: 'The operator console is off: set ATRIUM_OPERATOR_TOKEN to turn it on.',
  });
}
