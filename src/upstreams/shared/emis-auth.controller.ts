import { createHash, timingSafeEqual } from 'node:crypto';
import { Controller, Get, Header, HttpCode, Inject, Post, Req, type Type } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Public, UpstreamAccess } from '../../core/auth/auth.decorators.js';
import { CONSUMER_STORE, disabled } from '../../core/auth/consumer-auth.guard.js';
import type { ConsumerStore } from '../../core/auth/consumer-store.service.js';
import { GatewayError } from '../../core/errors/gateway-error.js';
import { parseQuery, queryObjectOf } from '../../core/http/query-string.js';

export interface EmisAuthControllerOptions {
  /** Upstream the prefixes belong to (`documents`): the consumer must be allowed it. */
  readonly upstream: string;
  /** `['documents', 'news']` */
  readonly prefixes: readonly string[];
}

function single(v: unknown): string | undefined {
  if (typeof v === 'string') return v;
  return Array.isArray(v) && typeof v[0] === 'string' ? v[0] : undefined;
}

/** Login parameters from the query (what the EMIS client sends) or a form/JSON body. */
function param(req: FastifyRequest, name: string): string | undefined {
  const fromQuery = single(queryObjectOf(req)[name]);
  if (fromQuery !== undefined) return fromQuery;
  const body = req.body;
  if (!Buffer.isBuffer(body) || body.length === 0 || body.length > 65_536) return undefined;
  const text = body.toString('utf8');
  if (String(req.headers['content-type'] ?? '').includes('json')) {
    try {
      const v = (JSON.parse(text) as Record<string, unknown>)?.[name];
      return typeof v === 'string' ? v : undefined;
    } catch {
      return undefined;
    }
  }
  for (const [k, v] of parseQuery(text)) if (k === name) return v;
  return undefined;
}

function sameText(a: string, b: string): boolean {
  // Digests make the compare constant-time whatever the lengths.
  const da = createHash('sha256').update(a).digest();
  const db = createHash('sha256').update(b).digest();
  return timingSafeEqual(da, db);
}

/**
 * The EMIS client's own session calls, answered by the gateway and never forwarded (the client logs in
 * before anything else, so the gateway must answer it): `Auth/login/` with username = consumer id and password = that consumer's gateway key answers
 * `{"data":{"sessionId":"<the key>"}}`, which the client then sends as `sessionId` (a key position the
 * guard accepts); `Auth/logout/` is a no-op success (forwarding it would end the gateway's shared upstream
 * session); `Auth/getUserData/` describes the consumer. The password is never echoed in an error or logged.
 */
export function createEmisAuthController(opts: EmisAuthControllerOptions): Type<unknown> {
  const { upstream } = opts;

  @Controller([...opts.prefixes])
  class EmisAuthController {
    constructor(@Inject(CONSUMER_STORE) private readonly store: ConsumerStore) {}

    @Public()
    @Get('Auth/login/')
    @Header('cache-control', 'no-store')
    loginGet(@Req() req: FastifyRequest): object {
      return this.login(req);
    }

    @Public()
    @Post('Auth/login/')
    @HttpCode(200)
    @Header('cache-control', 'no-store')
    loginPost(@Req() req: FastifyRequest): object {
      return this.login(req);
    }

    @Public()
    @Get('Auth/logout/')
    logoutGet(): object {
      return { data: { loggedOut: true } };
    }

    @Public()
    @Post('Auth/logout/')
    @HttpCode(200)
    logoutPost(): object {
      return { data: { loggedOut: true } };
    }

    @UpstreamAccess(upstream, false)
    @Get('Auth/getUserData/')
    userGet(@Req() req: FastifyRequest): object {
      return this.userData(req);
    }

    @UpstreamAccess(upstream, false)
    @Post('Auth/getUserData/')
    @HttpCode(200)
    userPost(@Req() req: FastifyRequest): object {
      return this.userData(req);
    }

    login(req: FastifyRequest): object {
      const username = param(req, 'username');
      const password = param(req, 'password');
      if (!username || !password)
        throw new GatewayError('VALIDATION_FAILED', {
          parameter: !username ? 'username' : 'password',
          message: 'Auth/login/ needs username (your consumer id) and password (your gateway key).',
        });
      const consumer = this.store.authenticate(password);
      if (!consumer || !sameText(consumer.id, username))
        throw new GatewayError('UNAUTHENTICATED', {
          message: 'Login refused: the username must be your consumer id and the password your gateway key.',
        });
      if (consumer.enabled === false) throw disabled(consumer);
      if (!consumer.upstreams.has(upstream))
        throw new GatewayError('FORBIDDEN', {
          message: `Consumer "${consumer.id}" may not use the ${upstream} interface.`,
        });
      return { data: { sessionId: password } };
    }

    userData(req: FastifyRequest): object {
      const c = req.consumer!;
      return {
        data: {
          username: c.id,
          gateway: 'atrium',
          interfaces: [...c.upstreams],
          write: c.write,
        },
      };
    }
  }

  const name = upstream.charAt(0).toUpperCase() + upstream.slice(1) + 'AuthController';
  Object.defineProperty(EmisAuthController, 'name', { value: name });
  return EmisAuthController;
}
