import { Inject, Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import {
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace as otelTrace,
  type Context,
  type Span,
  type Tracer,
} from '@opentelemetry/api';
import type { BasicTracerProvider } from '@opentelemetry/sdk-trace-base';
import { createRequire } from 'node:module';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { GatewayError } from '../core/errors/gateway-error.js';
import type { UpstreamLimitStageOptions } from '../proxy/stages/upstream-limit.stage.js';
import type { Stage } from '../proxy/pipeline.types.js';
import { atriumRouteOf } from '../proxy/upstream-controller.factory.js';
import {
  parseTraceparent,
  untracedContext,
  type ActiveSpan,
  type RequestTrace,
  type SpanStarter,
} from '../core/tracing/trace-context.js';
import { budgetTrace, vendorTraceStage } from './tracing.stages.js';
import type { TracingStages } from './tracing.tokens.js';

const KIND = { internal: SpanKind.INTERNAL, client: SpanKind.CLIENT } as const;

function wrap(span: Span): ActiveSpan {
  return {
    spanId: span.spanContext().spanId,
    setAttribute: (k, v) => void span.setAttribute(k, v),
    fail: (err) =>
      void span.setStatus({
        code: SpanStatusCode.ERROR,
        message:
          typeof err === 'string'
            ? err
            : err instanceof GatewayError
              ? err.code
              : err instanceof Error
                ? err.name
                : undefined,
      }),
    end: () => span.end(),
  };
}

/** Starts spans under one parent span (the request's, or a batch item's or view part's under it). */
class SpansUnder implements SpanStarter {
  constructor(
    private readonly tracer: Tracer,
    private readonly parent: Context,
  ) {}

  start(name: string, kind: 'internal' | 'client', attributes?: Record<string, string | number>): ActiveSpan {
    return wrap(this.tracer.startSpan(name, { kind: KIND[kind], attributes }, this.parent));
  }

  nest(name: string, attributes?: Record<string, string | number>): { span: ActiveSpan; spans: SpanStarter } {
    const span = this.tracer.startSpan(name, { kind: SpanKind.INTERNAL, attributes }, this.parent);
    return { span: wrap(span), spans: new SpansUnder(this.tracer, otelTrace.setSpan(ROOT_CONTEXT, span)) };
  }
}

/** The request's trace when spans are exported: ids from the SDK's server span, children under it. */
class RecordedTrace implements RequestTrace {
  readonly traceId: string;
  readonly spanId: string;
  readonly flags: string;
  readonly spans: SpanStarter;

  constructor(
    tracer: Tracer,
    readonly span: Span,
    readonly tracestate: string | undefined,
  ) {
    const sc = span.spanContext();
    this.traceId = sc.traceId;
    this.spanId = sc.spanId;
    this.flags = (sc.traceFlags & 1) === 1 ? '01' : '00';
    this.spans = new SpansUnder(tracer, otelTrace.setSpan(ROOT_CONTEXT, span));
  }
}

/**
 * Traces across the hop (README "Traces"): accepts the consumer's W3C `traceparent`/`tracestate` or starts a
 * trace, puts it on every vendor call and in the request log line and error envelope. With
 * `OTEL_EXPORTER_OTLP_ENDPOINT` set, spans (the request, cache lookup, budget wait, each vendor attempt) go
 * to that collector over OTLP/HTTP in batches; unset, no SDK object is created and no span recorded.
 */
type TracingSdk = typeof import('@opentelemetry/sdk-trace-base') &
  typeof import('@opentelemetry/exporter-trace-otlp-http') &
  typeof import('@opentelemetry/resources') &
  typeof import('@opentelemetry/semantic-conventions');

/**
 * The OpenTelemetry SDK and exporter, loaded only when spans are exported (ATRIUM_TRACING_ENDPOINT): about
 * 10 MB of resident memory a gateway without export does not carry. Propagation needs only the API.
 */
function loadTracingSdk(): TracingSdk {
  const require = createRequire(import.meta.url);
  return {
    ...(require('@opentelemetry/sdk-trace-base') as object),
    ...(require('@opentelemetry/exporter-trace-otlp-http') as object),
    ...(require('@opentelemetry/resources') as object),
    ...(require('@opentelemetry/semantic-conventions') as object),
  } as TracingSdk;
}

@Injectable()
export class TracingService implements TracingStages, BeforeApplicationShutdown {
  private readonly logger = new Logger('Tracing');
  private readonly provider?: BasicTracerProvider;
  private readonly tracer?: Tracer;
  private installed = false;

  constructor(@Inject(ATRIUM_CONFIG) config: AtriumConfig) {
    const t = config.tracing;
    if (!t) return;
    const sdk = loadTracingSdk();
    const exporter = new sdk.OTLPTraceExporter({ url: `${t.endpoint}/v1/traces` });
    this.provider = new sdk.BasicTracerProvider({
      resource: sdk.resourceFromAttributes({ ...t.resource, [sdk.ATTR_SERVICE_NAME]: t.serviceName }),
      spanProcessors: [new sdk.BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
    });
    this.tracer = this.provider.getTracer('atrium');
    this.logger.log(
      `exporting spans to ${t.endpoint}/v1/traces as ${t.serviceName} (instance ${t.resource['service.instance.id']})`,
    );
  }

  get exporting(): boolean {
    return this.tracer !== undefined;
  }

  /**
   * Returns what sets each request's trace context, which the app's one onRequest hook calls first
   * (configureApp: every refusal after it carries the trace id; no hook of its own per request), and adds
   * the hooks that end the request's span when spans are exported.
   */
  install(fastify: FastifyInstance): (req: FastifyRequest) => RequestTrace {
    const tracer = this.tracer;
    const traceOf = tracer
      ? (req: FastifyRequest): RequestTrace => this.startRequest(tracer, req)
      : (req: FastifyRequest): RequestTrace =>
          untracedContext(req.headers.traceparent, req.headers.tracestate);
    if (this.installed || !tracer) return traceOf;
    this.installed = true;
    const finish = (req: FastifyRequest, status: number | undefined) => {
      const t = req.trace;
      if (!(t instanceof RecordedTrace)) return;
      const atrium = atriumRouteOf(req);
      const route = atrium ? atrium.routeId : (req.routeOptions.url ?? 'unmatched');
      t.span.updateName(`${req.method} ${route}`);
      t.span.setAttribute('http.route', route);
      if (atrium) t.span.setAttribute('atrium.upstream', atrium.upstream);
      if (req.consumer) t.span.setAttribute('atrium.consumer', req.consumer.id);
      if (status !== undefined) {
        t.span.setAttribute('http.response.status_code', status);
        if (status >= 500) t.span.setStatus({ code: SpanStatusCode.ERROR });
      } else t.span.setStatus({ code: SpanStatusCode.ERROR, message: 'aborted' });
      t.span.end();
    };
    fastify.addHook('onResponse', (req: FastifyRequest, reply: FastifyReply, done: () => void) => {
      finish(req, reply.statusCode);
      done();
    });
    fastify.addHook('onRequestAbort', (req: FastifyRequest, done: () => void) => {
      finish(req, undefined);
      done();
    });
    return traceOf;
  }

  private startRequest(tracer: Tracer, req: FastifyRequest): RecordedTrace {
    const parsed = parseTraceparent(req.headers.traceparent, req.headers.tracestate);
    const tracestate = parsed?.tracestate;
    let parent = ROOT_CONTEXT;
    if (parsed)
      parent = otelTrace.setSpanContext(ROOT_CONTEXT, {
        traceId: parsed.traceId,
        spanId: parsed.parentId,
        traceFlags: parseInt(parsed.flags, 16) & 1,
        isRemote: true,
      });
    const span = tracer.startSpan(
      req.method,
      {
        kind: SpanKind.SERVER,
        attributes: { 'http.request.method': req.method, 'client.address': req.ip },
      },
      parent,
    );
    return new RecordedTrace(tracer, span, tracestate);
  }

  vendorStage(upstream: string): Stage {
    return vendorTraceStage(upstream);
  }

  limitOptions(limit: UpstreamLimitStageOptions, upstream: string): UpstreamLimitStageOptions {
    return this.tracer ? budgetTrace(limit, upstream) : limit;
  }

  /** Sends the spans still buffered before the app goes away. */
  async beforeApplicationShutdown(): Promise<void> {
    try {
      await this.provider?.shutdown();
    } catch (e) {
      this.logger.warn(`span export at shutdown failed: ${(e as Error).message}`);
    }
  }
}
