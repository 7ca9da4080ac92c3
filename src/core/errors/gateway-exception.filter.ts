import {
  Catch,
  HttpException,
  Injectable,
  Logger,
  type ArgumentsHost,
  type ExceptionFilter,
} from '@nestjs/common';
import { bodyPending, drainAfterEarlyAnswer } from '../http/early-answer-drain.js';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AllowedMethods } from '../http/allowed-methods.js';
import { wantsXml } from '../http/negotiation.js';
import { SecretRedactor } from '../logging/secret-redactor.js';
import { parseQuery } from '../http/query-string.js';
import type { RenderedEnvelope } from './client-error.js';
import type { ErrorCode } from './error-codes.js';
import { buildEnvelope, envelopeToXml, type ErrorEnvelope } from './error-envelope.js';
import { ErrorShapeRegistry, type ErrorShapeExtension } from './error-shape.registry.js';
import { EnvelopeTemplates } from './envelope-template.js';
import { GatewayError, isSharedError } from './gateway-error.js';

declare module 'fastify' {
  interface FastifyRequest {
    /** The code of the error envelope this request was answered with (usage counting reads it). */
    errorCode?: ErrorCode;
  }
}

/** What an error answer is written from: the request's ids, URL (the vendor shape) and wanted format. */
export interface ErrorContext {
  readonly requestId: string;
  readonly traceId?: string;
  readonly url: string;
  /** The `format` query parameter, if given once. */
  readonly format?: string;
  readonly accept?: string;
}

export interface ErrorAnswer {
  readonly code: ErrorCode;
  readonly status: number;
  readonly headers: Record<string, string>;
  readonly body: string;
}

const HTTP_STATUS_CODE: Record<number, ErrorCode> = {
  400: 'VALIDATION_FAILED',
  401: 'UNAUTHENTICATED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  408: 'REQUEST_TIMEOUT',
  413: 'PAYLOAD_TOO_LARGE',
  414: 'URI_TOO_LONG',
  415: 'UNSUPPORTED_FORMAT',
  429: 'CONSUMER_RATE_LIMITED',
  431: 'HEADERS_TOO_LARGE',
};

/** Any thrown value → GatewayError. Unknown errors become INTERNAL; their cause is logged, not sent. */
export function toGatewayError(err: unknown): GatewayError {
  if (err instanceof GatewayError) return err;
  if (err instanceof HttpException) {
    const status = err.getStatus();
    const code = HTTP_STATUS_CODE[status] ?? (status >= 500 ? 'INTERNAL' : 'VALIDATION_FAILED');
    const msg = status === 404 ? 'No such route on the gateway.' : status < 500 ? err.message : undefined;
    return new GatewayError(code, { message: msg, cause: err });
  }
  // Fastify's own errors (body too large, bad content) carry a 4xx statusCode.
  const fst = err as { statusCode?: number; code?: string; message?: string };
  if (typeof fst?.statusCode === 'number' && fst.statusCode >= 400 && fst.statusCode < 500) {
    const code = HTTP_STATUS_CODE[fst.statusCode] ?? 'VALIDATION_FAILED';
    return new GatewayError(code, {
      message: code === 'PAYLOAD_TOO_LARGE' ? undefined : fst.message,
      cause: err,
    });
  }
  return new GatewayError('INTERNAL', { cause: err });
}

/**
 * Writes the one error envelope for every failure: JSON, or XML when the client asked for XML, with the
 * vendor-shaped extras of the request's prefix, `Retry-After` where known, and no secret in any field.
 */
@Catch()
@Injectable()
export class GatewayExceptionFilter implements ExceptionFilter {
  private readonly logger = new Logger('Errors');
  private allowed?: AllowedMethods;
  private readonly templates: EnvelopeTemplates;

  constructor(
    private readonly shapes: ErrorShapeRegistry,
    private readonly redactor: SecretRedactor,
  ) {
    this.templates = new EnvelopeTemplates(
      (err, requestId, traceId, ext) => this.envelopeOf(err, requestId, traceId, ext),
      () => redactor.generation,
    );
  }

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    this.send(exception, ctx.getRequest<FastifyRequest>(), ctx.getResponse<FastifyReply>());
  }

  /** The router's methods per path (configureApp): a router 404 on a path with other methods is a 405. */
  useAllowedMethods(allowed: AllowedMethods): void {
    this.allowed = allowed;
  }

  send(exception: unknown, req: FastifyRequest, reply: FastifyReply): void {
    let err = toGatewayError(exception);
    let allow: string[] | undefined;
    // Fastify's own 413 does not say the limit; the route's (the gateway's) does.
    if (err.code === 'PAYLOAD_TOO_LARGE' && !(exception instanceof GatewayError)) {
      const limit = req.routeOptions?.bodyLimit ?? req.server?.initialConfig.bodyLimit;
      if (limit !== undefined)
        err = new GatewayError('PAYLOAD_TOO_LARGE', {
          message: `The request body is too large: the gateway accepts at most ${limit} bytes.`,
          cause: exception,
        });
    }
    if (err.code === 'NOT_FOUND' && !(exception instanceof GatewayError) && this.allowed) {
      allow = this.allowed.allowedFor(req.url);
      if (allow.length > 0 && !allow.includes(req.method))
        err = new GatewayError('METHOD_NOT_ALLOWED', {
          message: `Method ${req.method} is not allowed on this path (allowed: ${allow.join(', ')}).`,
        });
      else allow = undefined;
    }
    const requestId = String(req.id);
    req.errorCode = err.code;
    this.note(err, requestId, exception);
    if (reply.sent) return;
    const raw = req.raw as FastifyRequest['raw'] | undefined;
    if (raw && bodyPending(raw)) {
      // Answered before the body was read (413 over the limit, a refusal in onRequest): Fastify would close
      // at once and reset a client still writing. The rest is read and dropped instead, within bounds, so
      // the client sees this answer and the connection may stay open.
      reply.removeHeader('connection');
      drainAfterEarlyAnswer(raw);
    }
    const q = req.query as Record<string, unknown> | undefined;
    const answer = this.answerOf(err, {
      requestId,
      traceId: req.trace?.traceId,
      url: req.url,
      format: typeof q?.format === 'string' ? q.format : undefined,
      accept: req.headers.accept,
    });
    reply.status(answer.status);
    for (const name in answer.headers) reply.header(name, answer.headers[name]);
    if (allow) reply.header('allow', allow.join(', '));
    void reply.send(answer.body);
  }

  /**
   * The envelope answer to an error of a call made inside a client's request (a batch item, a view part):
   * what `send` would write, as status, headers and body, logged as `send` logs it.
   */
  answerFor(exception: unknown, ctx: ErrorContext): ErrorAnswer {
    const err = toGatewayError(exception);
    this.note(err, ctx.requestId, exception);
    return this.answerOf(err, ctx);
  }

  private note(err: GatewayError, requestId: string, exception: unknown): void {
    if (err.code === 'INTERNAL') {
      this.logger.error(
        this.redactor.redact(`errorId=${requestId} ${describe(exception)}`),
        exception instanceof Error ? this.redactor.redact(exception.stack ?? '') : undefined,
      );
    } else if (err.status >= 500) {
      this.logger.warn(this.redactor.redact(`requestId=${requestId} ${err.code} ${err.message}`));
    }
  }

  private answerOf(err: GatewayError, ctx: ErrorContext): ErrorAnswer {
    const headers: Record<string, string> = {};
    if (err.retryAfterSeconds !== undefined) headers['retry-after'] = String(err.retryAfterSeconds);
    if (err.status === 401) headers['www-authenticate'] = err.authChallenge ?? 'Bearer realm="atrium"';
    const ext = this.shapes.forUrl(ctx.url);
    let body: string;
    if (wantsXml(ctx.format, ctx.accept)) {
      headers['content-type'] = 'application/xml; charset=utf-8';
      body = envelopeToXml(this.envelopeOf(err, ctx.requestId, ctx.traceId, ext));
    } else {
      headers['content-type'] = 'application/json; charset=utf-8';
      // A shared refusal (a 429 storm's) was serialised once: only the ids are filled in.
      body =
        (isSharedError(err) ? this.templates.json(err, ext, ctx.requestId, ctx.traceId) : undefined) ??
        JSON.stringify(this.envelopeOf(err, ctx.requestId, ctx.traceId, ext));
    }
    return { code: err.code, status: err.status, headers, body };
  }

  /**
   * The envelope of a refusal the HTTP parser made, from the request target as far as it was read: the
   * prefix's vendor-shaped fields, XML when its query or its `Accept` (when that was read) asks for it.
   */
  renderHead(
    err: GatewayError,
    requestId: string,
    traceId: string,
    target: string,
    accept?: string,
  ): RenderedEnvelope {
    const q = target.indexOf('?');
    const format = q === -1 ? undefined : parseQuery(target.slice(q + 1)).find(([k]) => k === 'format')?.[1];
    const envelope = this.envelopeOf(err, requestId, traceId, this.shapes.forUrl(target));
    return wantsXml(format, accept)
      ? { contentType: 'application/xml; charset=utf-8', body: envelopeToXml(envelope) }
      : { contentType: 'application/json; charset=utf-8', body: JSON.stringify(envelope) };
  }

  /** The envelope of `err` for one request: message scrubbed, the URL's vendor-shaped fields beside it. */
  private envelopeOf(
    err: GatewayError,
    requestId: string,
    traceId: string | undefined,
    ext: ErrorShapeExtension | undefined,
  ): ErrorEnvelope {
    const envelope = buildEnvelope(err, requestId, traceId);
    envelope.error.message = this.redactor.redact(envelope.error.message);
    if (ext) Object.assign(envelope, ext.extend(err));
    return envelope;
  }
}

function describe(e: unknown): string {
  if (e instanceof Error) {
    const cause = (e as { cause?: unknown }).cause;
    return `${e.name}: ${e.message}${cause instanceof Error ? ` (cause: ${cause.name}: ${cause.message})` : ''}`;
  }
  return String(e);
}
