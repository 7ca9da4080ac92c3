import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ATRIUM_CONFIG, type AtriumConfig } from '../../config/atrium-config.js';
import { CONSUMER_STORE } from '../auth/consumer-auth.guard.js';
import { extractConsumerKey } from '../auth/consumer-key.js';
import { claimedConsumer, looksLikeJwt } from '../auth/token-verifier.js';
import type { Consumer } from '../auth/consumer.js';
import type { ConsumerStore } from '../auth/consumer-store.service.js';
import { GatewayError } from '../errors/gateway-error.js';

/**
 * Response headers a browser app may read: request id, cache state and validators, view completeness,
 * rate-limit state, file names, and why a token was refused (a page renews its sign-in on "token expired").
 */
export const CORS_EXPOSED_HEADERS = [
  'x-request-id',
  'x-cache',
  'age',
  'etag',
  'x-atrium-complete',
  'retry-after',
  'ratelimit',
  'ratelimit-policy',
  'ratelimit-limit',
  'ratelimit-remaining',
  'ratelimit-reset',
  'content-disposition',
  'www-authenticate',
] as const;

/**
 * Request headers a browser app may send: the key positions, negotiation, cache control and revalidation,
 * its request id and its W3C trace context (browser tracing).
 */
export const CORS_ALLOWED_HEADERS = [
  'authorization',
  'x-api-key',
  'content-type',
  'accept',
  'accept-language',
  'cache-control',
  'if-none-match',
  'if-modified-since',
  'x-request-id',
  'traceparent',
  'tracestate',
] as const;

export const CORS_ALLOWED_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

/** `https://App.example:443/` → `https://app.example`; undefined when it is not an http(s) origin. */
export function normalizeOrigin(origin: string): string | undefined {
  try {
    const u = new URL(origin);
    return u.protocol === 'http:' || u.protocol === 'https:' ? u.origin : undefined;
  } catch {
    return undefined;
  }
}

/** `http://localhost:<port>` or `http://127.0.0.1:<port>` (a developer's own machine, any port). */
export function isLocalDevOrigin(origin: string): boolean {
  return /^http:\/\/(localhost|127\.0\.0\.1)(:\d{1,5})?$/.test(origin);
}

function header(req: FastifyRequest, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/**
 * CORS per consumer (each consumer names the browser origins it serves). Hand-made rather than @fastify/cors: that plugin only decides which
 * headers to add, while this policy refuses an unknown origin (403, before auth and quota) and checks the
 * origin against the authenticated consumer's own list. A preflight carries no key, so it is allowed when the origin is in
 * ANY consumer's list; the real request is then allowed only when the authenticated consumer lists the
 * origin. Answers echo the origin (never `*`, since credentials are allowed) and vary on it. Runs in the
 * Fastify onRequest hook: preflights never reach auth, routing or an upstream.
 */
@Injectable()
export class CorsPolicy {
  /** Union of every consumer's origins: what a key-less preflight may be allowed for. */
  private anyConsumer = new Set<string>();
  private byConsumer = new Map<string, ReadonlySet<string>>();
  /** Consumers that also accept any local development origin (the sandbox's demo consumer). */
  private anyLocalPort: ReadonlySet<string> = new Set<string>();
  /** Preflight answer headers, built once. */
  private readonly preflight: Record<string, string>;
  private readonly exposed = CORS_EXPOSED_HEADERS.join(', ');

  constructor(
    @Inject(CONSUMER_STORE) private readonly store: ConsumerStore,
    @Inject(ATRIUM_CONFIG) config: Pick<AtriumConfig, 'corsMaxAgeSeconds'>,
  ) {
    this.build(store.all());
    // Consumers change at run time (admin API, file reload): the sets are rebuilt whole and swapped.
    store.onChange((all) => this.build(all));
    this.preflight = {
      'access-control-allow-methods': CORS_ALLOWED_METHODS.join(', '),
      'access-control-allow-headers': CORS_ALLOWED_HEADERS.join(', '),
      'access-control-max-age': String(config.corsMaxAgeSeconds),
    };
  }

  private build(consumers: readonly Consumer[]): void {
    const anyConsumer = new Set<string>();
    const byConsumer = new Map<string, ReadonlySet<string>>();
    const anyLocalPort = new Set<string>();
    for (const c of consumers) {
      const own = new Set<string>();
      for (const o of c.corsOrigins) {
        const n = normalizeOrigin(o);
        if (!n) throw new Error(`consumer "${c.id}": corsOrigins entry is not an http(s) origin`);
        own.add(n);
        anyConsumer.add(n);
      }
      byConsumer.set(c.id, own);
      if (c.corsAnyLocalPort) anyLocalPort.add(c.id);
    }
    this.anyConsumer = anyConsumer;
    this.byConsumer = byConsumer;
    this.anyLocalPort = anyLocalPort;
  }

  /** Origins some consumer allows (console, docs). */
  get origins(): readonly string[] {
    return [...this.anyConsumer];
  }

  /**
   * Applies the policy to one request. Returns false when it has answered (a preflight) or `fail` was
   * called (a refused origin); true when the request goes on.
   */
  onRequest(req: FastifyRequest, reply: FastifyReply, fail: (err: GatewayError) => void): boolean {
    const raw = header(req, 'origin');
    if (raw === undefined) {
      // Browser caches must not reuse a non-CORS answer for a cross-origin call.
      if (this.anyConsumer.size > 0) void reply.header('vary', 'Origin');
      return true;
    }
    // Same-origin calls (the console, the docs page) are not CORS.
    const host = header(req, 'host');
    if (host !== undefined && raw.slice(raw.indexOf('//') + 2) === host) return true;
    // Browsers send origins already serialised: the set lookup spares a URL parse for every known one.
    const origin = this.anyConsumer.has(raw) ? raw : normalizeOrigin(raw);
    const known =
      origin !== undefined &&
      (this.anyConsumer.has(origin) || (this.anyLocalPort.size > 0 && isLocalDevOrigin(origin)));

    if (req.method === 'OPTIONS' && header(req, 'access-control-request-method') !== undefined) {
      void reply.header('vary', 'Origin, Access-Control-Request-Method, Access-Control-Request-Headers');
      if (!known) {
        fail(new GatewayError('FORBIDDEN', { message: 'This origin may not call the gateway.' }));
        return false;
      }
      this.allow(reply, origin);
      for (const name in this.preflight) void reply.header(name, this.preflight[name]);
      void reply.code(204).send();
      return false;
    }

    void reply.header('vary', 'Origin');
    if (!known) {
      // Refused before auth and routing: a page on an unknown origin spends no quota.
      fail(new GatewayError('FORBIDDEN', { message: 'This origin may not call the gateway.' }));
      return false;
    }
    // The origin is allowed for someone; from here on the browser may read the answer, errors included.
    this.allow(reply, origin);
    const key = extractConsumerKey(req);
    let consumer = key === undefined ? undefined : this.store.authenticate(key);
    if (consumer === undefined && key !== undefined && looksLikeJwt(key)) {
      // The consumer a token names (not yet verified: the guard does that): only ever a cause to refuse.
      const claimed = claimedConsumer(this.store, key);
      if (typeof claimed !== 'string') consumer = claimed;
    }
    // No or an unknown key: the guard answers 401 (readable by the page). A known key must list the origin.
    if (consumer && !this.allows(consumer.id, origin)) {
      fail(
        new GatewayError('FORBIDDEN', {
          message: `Consumer "${consumer.id}" may not be used from this origin.`,
        }),
      );
      return false;
    }
    return true;
  }

  private allows(consumerId: string, origin: string): boolean {
    if (this.byConsumer.get(consumerId)?.has(origin)) return true;
    return this.anyLocalPort.has(consumerId) && isLocalDevOrigin(origin);
  }

  private allow(reply: FastifyReply, origin: string): void {
    void reply
      .header('access-control-allow-origin', origin)
      .header('access-control-allow-credentials', 'true')
      .header('access-control-expose-headers', this.exposed);
  }
}
