import { Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RouteMatcher } from '../batch/route-matcher.js';
import type { HttpMethod } from '../proxy/pipeline.types.js';

/** One failed answer as the console shows it: no path, no query, no key — the route id and the envelope. */
export interface ErrorEvent {
  at: number;
  status: number;
  code: string;
  route?: string;
  message?: string;
  upstreamStatus?: number;
  retryAfterSeconds?: number;
}

export interface ConsumerRejections {
  /** 429 CONSUMER_RATE_LIMITED answers since start. */
  rateLimited: number;
  lastRateLimitedAt?: number;
}

const PER_UPSTREAM = 8;

interface Envelope {
  error?: {
    code?: unknown;
    message?: unknown;
    upstream?: unknown;
    upstreamStatus?: unknown;
    retryAfterSeconds?: unknown;
  };
}

/**
 * Remembers the last errors per upstream and the quota rejections per consumer, for the console. It reads
 * only answers with status ≥ 400 (an integer compare for the others) and keeps a few small records.
 */
@Injectable()
export class RecentErrors {
  private readonly byUpstream = new Map<string, ErrorEvent[]>();
  private readonly byConsumer = new Map<string, ConsumerRejections>();
  private matcher?: RouteMatcher;

  useMatcher(matcher: RouteMatcher): void {
    this.matcher = matcher;
  }

  /** Fastify onSend hook body. */
  observe(req: FastifyRequest, reply: FastifyReply, payload: unknown): void {
    const status = reply.statusCode;
    if (status < 400) return;
    let env: Envelope | undefined;
    if (typeof payload === 'string' && payload.charCodeAt(0) === 123 /* { */) {
      try {
        env = JSON.parse(payload) as Envelope;
      } catch {
        env = undefined;
      }
    }
    const e = env?.error;
    const code = typeof e?.code === 'string' ? e.code : (xmlField(payload, 'code') ?? `HTTP_${status}`);
    if (code === 'CONSUMER_RATE_LIMITED' && req.consumer) {
      const r = this.byConsumer.get(req.consumer.id) ?? { rateLimited: 0 };
      r.rateLimited++;
      r.lastRateLimitedAt = Date.now();
      this.byConsumer.set(req.consumer.id, r);
      return;
    }
    // Upstream trouble only: errors the upstream caused or the shield decided, and gateway failures.
    const match = this.matcher?.match(req.method as HttpMethod, req.url);
    const upstream =
      typeof e?.upstream === 'string'
        ? e.upstream
        : (xmlField(payload, 'upstream') ?? (status >= 500 ? match?.upstream : undefined));
    if (!upstream) return;
    const event: ErrorEvent = { at: Date.now(), status, code };
    if (match?.route) event.route = match.route.id;
    if (typeof e?.message === 'string') event.message = e.message.slice(0, 200);
    if (typeof e?.upstreamStatus === 'number') event.upstreamStatus = e.upstreamStatus;
    if (typeof e?.retryAfterSeconds === 'number') event.retryAfterSeconds = e.retryAfterSeconds;
    let list = this.byUpstream.get(upstream);
    if (!list) this.byUpstream.set(upstream, (list = []));
    list.unshift(event);
    if (list.length > PER_UPSTREAM) list.length = PER_UPSTREAM;
  }

  upstream(name: string): readonly ErrorEvent[] {
    return this.byUpstream.get(name) ?? [];
  }

  consumer(id: string): ConsumerRejections {
    return this.byConsumer.get(id) ?? { rateLimited: 0 };
  }
}

const XML_FIELDS = {
  code: /<code>([A-Z_]{1,64})<\/code>/,
  upstream: /<upstream>([a-z0-9_-]{1,64})<\/upstream>/,
};

/** The envelope's code or upstream from an XML error answer. */
function xmlField(payload: unknown, field: keyof typeof XML_FIELDS): string | undefined {
  if (typeof payload !== 'string' || payload.charCodeAt(0) !== 60 /* < */) return undefined;
  return XML_FIELDS[field].exec(payload)?.[1];
}
