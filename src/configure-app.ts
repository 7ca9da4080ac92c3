import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { ValidationPipe, type ValidationError } from '@nestjs/common';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AtriumConfig } from './config/atrium-config.js';
import { CorsPolicy } from './core/cors/cors.policy.js';
import { GatewayError } from './core/errors/gateway-error.js';
import { GatewayExceptionFilter } from './core/errors/gateway-exception.filter.js';
import { AllowedMethods } from './core/http/allowed-methods.js';
import { fastifyQueryParser } from './core/http/query-string.js';
import { setupDocs } from './docs/docs.setup.js';
import { RequestObserver } from './metrics/request-observer.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Fastify as the gateway needs it: long GET queries, exact paths, raw bodies, safe request ids. */
export function createAdapter(config: Pick<AtriumConfig, 'bodyLimitBytes'>): FastifyAdapter {
  return new FastifyAdapter({
    bodyLimit: config.bodyLimitBytes,
    // Long GET queries (EMIS usage reports) need more than Node's default 16 KiB of headers.
    http: { maxHeaderSize: 64 * 1024 },
    routerOptions: {
      ignoreTrailingSlash: true,
      // Vendor clients send `news//Search/query/`.
      ignoreDuplicateSlashes: true,
      // Multi-id series paths carry up to 100 ids.
      maxParamLength: 16 * 1024,
      querystringParser: fastifyQueryParser,
    },
    requestIdHeader: false,
    genReqId: (raw: IncomingMessage) => {
      const h = raw.headers['x-request-id'];
      return typeof h === 'string' && REQUEST_ID.test(h) ? h : randomUUID();
    },
    return503OnClosing: true,
    forceCloseConnections: 'idle',
    logger: false,
  });
}

const ENCODED_SEPARATOR = /%(2f|5c|00)/i;
const DOT_SEGMENT = /(^|\/)(\.|%2e){2}(\/|$)/i;

/** Path tricks are refused before routing: encoded slashes or backslashes, NULs, `..` segments. */
function pathIsSafe(url: string): boolean {
  const q = url.indexOf('?');
  const path = q === -1 ? url : url.slice(0, q);
  if (path.indexOf('%') !== -1 && ENCODED_SEPARATOR.test(path)) return false;
  if (path.indexOf('.') !== -1 || path.indexOf('%') !== -1) return !DOT_SEGMENT.test(path);
  return true;
}

function validationError(errors: ValidationError[]): GatewayError {
  const first = errors[0];
  const messages = first?.constraints ? Object.values(first.constraints) : [];
  const parameter = first?.property ?? 'query';
  return new GatewayError('VALIDATION_FAILED', {
    parameter,
    message: messages[0]
      ? `Invalid parameter "${parameter}": ${messages[0]}.`
      : `Invalid parameter "${parameter}".`,
  });
}

/**
 * Options for NestFactory.create / createNestApplication. Nest's body parsers stay off: the gateway keeps
 * request bodies as bytes (configureApp) and forwards them as sent.
 */
export const NEST_APP_OPTIONS = { bodyParser: false } as const;

/** Everything main.ts and the tests share: body handling, hooks, validation, error filter, metrics, docs. */
export function configureApp(app: NestFastifyApplication): NestFastifyApplication {
  const fastify = app.getHttpAdapter().getInstance();
  const filter = app.get(GatewayExceptionFilter);
  const cors = app.get(CorsPolicy);
  // Routes are registered at init, after this: a wrong method on a known path becomes a 405 with `Allow`.
  const allowed = new AllowedMethods();
  fastify.addHook('onRoute', (r) => allowed.add(r.method, r.url ?? r.path));
  filter.useAllowedMethods(allowed);
  // Request metrics and the one log line per request, from one onResponse hook.
  app.get(RequestObserver).install(fastify);

  // Bodies are forwarded as the consumer sent them (form-urlencoded or JSON): keep the bytes, parse nothing.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  fastify.addHook('onRequest', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
    void reply.header('x-request-id', req.id);
    // CORS first: preflights are answered here (no auth, no upstream), and refusals stay readable.
    if (!cors.onRequest(req, reply, (err) => filter.send(err, req, reply))) return;
    if (!pathIsSafe(req.url)) {
      filter.send(
        new GatewayError('VALIDATION_FAILED', {
          parameter: 'path',
          message: 'The path contains an encoded separator or a dot segment.',
        }),
        req,
        reply,
      );
      return;
    }
    done();
  });
  // Fastify's own errors (body too large, …) reach GatewayExceptionFilter through Nest's error handler.
  // Draining: once close() starts, answers ask keep-alive clients to hang up, so in-flight requests finish
  // and the server can close instead of waiting for idle keep-alive sockets.
  let closing = false;
  fastify.addHook('preClose', (done: () => void) => {
    closing = true;
    done();
  });
  fastify.addHook('onSend', (_req: FastifyRequest, reply: FastifyReply, payload: unknown, done) => {
    if (closing) void reply.header('connection', 'close');
    done(null, payload);
  });

  app.useGlobalPipes(
    new ValidationPipe({
      transform: true,
      whitelist: false,
      forbidUnknownValues: false,
      validationError: { target: false, value: false },
      exceptionFactory: validationError,
    }),
  );
  setupDocs(app);
  return app;
}
