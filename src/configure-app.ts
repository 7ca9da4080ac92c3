import { randomUUID } from 'node:crypto';
import { unsafePathReason } from './core/http/path-safety.js';
import type { IncomingMessage, Server } from 'node:http';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type {
  FastifyError,
  FastifyInstance,
  FastifyReply,
  FastifyHttpOptions,
  FastifyRequest,
} from 'fastify';
import type { AtriumConfig } from './config/atrium-config.js';
import { CorsPolicy } from './core/cors/cors.policy.js';
import {
  answerWhatNodeRefuses,
  handleClientError,
  renderParserRefusals,
} from './core/errors/client-error.js';
import { GatewayError } from './core/errors/gateway-error.js';
import { GatewayExceptionFilter } from './core/errors/gateway-exception.filter.js';
import { AllowedMethods } from './core/http/allowed-methods.js';
import { installCompression } from './core/http/compression.js';
import { fastifyQueryParser } from './core/http/query-string.js';
import { setupDocs } from './docs/docs.setup.js';
import { RequestObserver } from './metrics/request-observer.js';
import type { RequestTrace } from './core/tracing/trace-context.js';
import { TracingService } from './tracing/tracing.service.js';
import { UsageService } from './usage/usage.service.js';

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The exception filter of each app, for the router's own refusals (`frameworkErrors`): the adapter is built
 * before the app, so configureApp plugs the filter in here, keyed by the Fastify instance.
 */
const frameworkErrorFilters = new WeakMap<
  FastifyInstance,
  { filter: GatewayExceptionFilter; traceOf?: (req: FastifyRequest) => RequestTrace }
>();

/** The router's refusals, before any hook ran: a path that is not valid percent-encoding, an overlong segment. */
function frameworkError(err: FastifyError): GatewayError {
  if (err.code === 'FST_ERR_MAX_PARAM_LENGTH')
    return new GatewayError('URI_TOO_LONG', {
      message: 'A path segment of the request URL is longer than 16,384 characters.',
    });
  if (err.code === 'FST_ERR_BAD_URL')
    return new GatewayError('VALIDATION_FAILED', {
      parameter: 'path',
      message: 'The path is not valid percent-encoded UTF-8.',
    });
  return new GatewayError('VALIDATION_FAILED', { parameter: 'path', cause: err });
}

/** Fastify as the gateway needs it: long GET queries, exact paths, raw bodies, safe request ids. */
export function createAdapter(
  config: Pick<AtriumConfig, 'bodyLimitBytes'> & Partial<Pick<AtriumConfig, 'trustedProxies'>>,
): FastifyAdapter {
  const trusted = config.trustedProxies ?? [];
  const options: FastifyHttpOptions<Server> = {
    bodyLimit: config.bodyLimitBytes,
    // `X-Forwarded-For` is believed only from these proxies (req.ip is then the client's address).
    trustProxy: trusted.length > 0 ? [...trusted] : false,
    // Long GET queries (EMIS usage reports) need more than Node's default 16 KiB of headers. Node's own
    // Host check answers outside the envelope; the onRequest hook checks it instead.
    http: { maxHeaderSize: 64 * 1024, requireHostHeader: false },
    // Every refusal is the one envelope with an x-request-id: what node's parser refuses (clientError) and
    // what the router refuses before any hook runs (frameworkErrors), as well as everything after.
    clientErrorHandler: handleClientError,
    frameworkErrors: (err: FastifyError, req: FastifyRequest, reply: FastifyReply) => {
      void reply.header('x-request-id', req.id);
      const entry = frameworkErrorFilters.get(req.server);
      if (!entry) {
        void reply.code(500).send();
        return;
      }
      // No hook ran: the refusal gets its trace context here, as every other answer does in onRequest.
      req.trace ??= entry.traceOf?.(req);
      entry.filter.send(frameworkError(err), req, reply);
    },
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
  };
  const adapter = new FastifyAdapter(options);
  // Compression of buffered JSON/XML answers (sendCompressible). Registered with the instance itself: the
  // plugin decorates each route as it is added, and NestFactory.create loads the queued plugins and adds the
  // routes before configureApp runs.
  installCompression(adapter.getInstance());
  return adapter;
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
  answerWhatNodeRefuses(fastify.server);
  renderParserRefusals(fastify.server, (err, requestId, traceId, target, accept) =>
    filter.renderHead(err, requestId, traceId, target, accept),
  );
  // Routes are registered at init, after this: a wrong method on a known path becomes a 405 with `Allow`.
  const allowed = new AllowedMethods();
  fastify.addHook('onRoute', (r) => allowed.add(r.method, r.url ?? r.path));
  filter.useAllowedMethods(allowed);
  // The trace context is set first in the onRequest hook below: every answer after it (refusals included)
  // carries the trace id.
  const traceOf = app.get(TracingService).install(fastify);
  frameworkErrorFilters.set(fastify, { filter, traceOf });
  // Request metrics, the one log line per request and the vendor usage count (off with ATRIUM_USAGE=off),
  // from one onResponse hook.
  const usage = app.get(UsageService);
  app
    .get(RequestObserver)
    .install(fastify, usage.counting ? (req, reply) => usage.count(req, reply) : undefined);

  // Bodies are forwarded as the consumer sent them (form-urlencoded or JSON): keep the bytes, parse nothing.
  fastify.removeAllContentTypeParsers();
  fastify.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));

  fastify.addHook('onRequest', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
    req.trace = traceOf(req);
    void reply.header('x-request-id', req.id);
    // CORS first: preflights are answered here (no auth, no upstream), and refusals stay readable.
    if (!cors.onRequest(req, reply, (err) => filter.send(err, req, reply))) return;
    if (req.headers.host === undefined && req.raw.httpVersion === '1.1') {
      filter.send(
        new GatewayError('VALIDATION_FAILED', {
          parameter: 'Host',
          message: 'An HTTP/1.1 request needs a Host header.',
        }),
        req,
        reply,
      );
      return;
    }
    const unsafe = unsafePathReason(req.url);
    if (unsafe !== undefined) {
      filter.send(
        new GatewayError('VALIDATION_FAILED', {
          parameter: 'path',
          message: unsafe,
        }),
        req,
        reply,
      );
      return;
    }
    // A plain OPTIONS (no CORS preflight; those were answered above) asks what the path allows: 204 with
    // `Allow`, before auth, as a 405 would say it. An unknown path stays a 404.
    if (req.method === 'OPTIONS') {
      const methods = allowed.allowedFor(req.url);
      if (methods.length > 0) {
        void reply
          .code(204)
          .header('allow', [...methods.filter((m) => m !== 'OPTIONS'), 'OPTIONS'].join(', '))
          .send();
        return;
      }
    }
    done();
  });
  // Fastify's own errors (body too large, …) reach GatewayExceptionFilter through Nest's error handler.
  // Draining: once close() starts, Fastify answers new requests 503 with `Connection: close`; requests in
  // flight finish on their keep-alive connections, and each connection is closed as soon as it is idle
  // (Node's server.close() reaps only the connections idle at that moment; test/e2e/drain.e2e.spec.ts). No
  // onSend hook: early answers (before the body was read) are handled where they are made, in the
  // exception filter.
  fastify.addHook('preClose', (done: () => void) => {
    const reap = setInterval(() => fastify.server.closeIdleConnections(), 50);
    reap.unref();
    fastify.server.once('close', () => clearInterval(reap));
    done();
  });

  setupDocs(app);
  return app;
}
