import { Inject, Injectable, Logger, Optional, type OnApplicationBootstrap } from '@nestjs/common';
import type { Consumer } from '../core/auth/consumer.js';
import { endSpanWith, nestedTrace, type RequestTrace } from '../core/tracing/trace-context.js';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { buildEnvelope } from '../core/errors/error-envelope.js';
import { ErrorShapeRegistry } from '../core/errors/error-shape.registry.js';
import { GatewayError } from '../core/errors/gateway-error.js';
import type { RouteDefinition } from '../proxy/pipeline.types.js';
import { ProxyService } from '../proxy/proxy.service.js';
import { notConfigured, UNSERVED_ROUTE_TABLES, type UnservedInterface } from '../proxy/unserved.js';
import { parseQuery } from '../core/http/query-string.js';
import { RouteCaller } from '../route-calls/route-caller.js';
import type { BatchCall, BatchItem } from './batch-request.js';
import { canonicalItemUrl, readItemPath, type ItemPath } from './item-path.js';
import { RouteMatcher } from './route-matcher.js';

export type BodyEncoding = 'json' | 'text' | 'base64';

export interface BatchItemResult {
  id: string;
  /** Route id when the path is a known interface route (`macro.feeds.list`). */
  route?: string;
  /** False when the batch deadline passed first; the item then carries a 504 envelope. */
  completed: boolean;
  status: number;
  /** Headers of note only: content type, cache state, age, ETag, retry-after, rate-limit state, request id. */
  headers: Record<string, string>;
  body?: unknown;
  bodyEncoding?: BodyEncoding;
  durationMs: number;
}

export interface BatchResult {
  total: number;
  completed: number;
  timedOut: boolean;
  timeoutMs: number;
  durationMs: number;
  items: BatchItemResult[];
}

/** Who runs the batch: every item runs as this consumer, so quota and permissions apply per item. */
export interface BatchCaller {
  readonly consumer: Consumer;
  readonly requestId: string;
  readonly acceptLanguage?: string;
  /** The batch request's trace: the items' vendor spans are its children. */
  readonly trace?: RequestTrace;
}

const NOTE_HEADERS = [
  'content-type',
  'x-cache',
  'age',
  'etag',
  'retry-after',
  'x-request-id',
  'content-language',
];
const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json\b/i;
const TEXT_TYPE = /^(?:text\/|application\/(?:[\w.+-]*\+)?xml\b)/i;

/** What an item will run, decided for every item before any runs: a proxy route, or a refusal. */
type ItemPlan =
  | {
      readonly route: RouteDefinition;
      readonly url: string;
      readonly params: Readonly<Record<string, string>>;
      readonly query: string;
      readonly refusal?: undefined;
    }
  | { readonly route?: RouteDefinition; readonly url?: undefined; readonly refusal: GatewayError };

function headerValue(v: string | string[] | number | undefined): string | undefined {
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v.join(', ') : String(v);
}

/** Bytes → the item's body: parsed JSON, text, or base64 for anything else. */
export function decodeBody(
  bytes: Buffer,
  contentType: string | undefined,
): { body?: unknown; bodyEncoding?: BodyEncoding } {
  if (bytes.length === 0) return {};
  if (contentType && JSON_TYPE.test(contentType)) {
    try {
      return { body: JSON.parse(bytes.toString('utf8')) as unknown, bodyEncoding: 'json' };
    } catch {
      return { body: bytes.toString('utf8'), bodyEncoding: 'text' };
    }
  }
  if (contentType && TEXT_TYPE.test(contentType))
    return { body: bytes.toString('utf8'), bodyEncoding: 'text' };
  return { body: bytes.toString('base64'), bodyEncoding: 'base64' };
}

/**
 * Runs a batch's GET items in parallel as the calling consumer (RouteCaller): the same quota, permission per
 * item, validation, pipeline (cache, coalescing, budget, retries) and error envelopes as a direct call.
 */
@Injectable()
export class BatchService implements OnApplicationBootstrap {
  private readonly logger = new Logger('Batch');
  private matcher = new RouteMatcher([]);
  /** Prefix → interface not served: its items answer as a direct call does (404 UPSTREAM_NOT_CONFIGURED). */
  private readonly unserved = new Map<string, UnservedInterface>();

  constructor(
    private readonly caller: RouteCaller,
    private readonly proxy: ProxyService,
    private readonly shapes: ErrorShapeRegistry,
    @Inject(ATRIUM_CONFIG) private readonly config: AtriumConfig,
    @Optional() @Inject(UNSERVED_ROUTE_TABLES) unserved: readonly UnservedInterface[] = [],
  ) {
    for (const u of unserved) for (const p of u.prefixes) this.unserved.set(p, u);
  }

  /** Upstream modules register in their onModuleInit; by bootstrap every route table is known. */
  onApplicationBootstrap(): void {
    this.matcher = new RouteMatcher(this.proxy.all().map((u) => u.def));
  }

  get limits(): { maxItems: number; timeoutMs: number } {
    return this.config.batch;
  }

  async run(call: BatchCall, caller: BatchCaller): Promise<BatchResult> {
    const started = performance.now();
    const results: Array<BatchItemResult | undefined> = call.items.map(() => undefined);
    const abort = new AbortController();
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, call.timeoutMs);
    });
    // Every item is resolved to a proxy route (or refused) before any item runs.
    const plans = call.items.map((item, i) => this.plan(item, i));
    const all = Promise.all(
      call.items.map(async (item, i) => {
        const r = await this.runItem(item, plans[i], i, caller, abort.signal);
        // An item that finishes after the deadline has already been reported as incomplete.
        if (!abort.signal.aborted) results[i] = r;
      }),
    );
    await Promise.race([all, deadline]);
    clearTimeout(timer);
    const timedOut = results.some((r) => r === undefined);
    // Stop waiting on what is left; the pipeline's own deadlines end those upstream calls.
    if (timedOut) abort.abort();
    const items = call.items.map(
      (item, i) => results[i] ?? this.incomplete(item, plans[i], i, caller, call.timeoutMs),
    );
    return {
      total: items.length,
      completed: items.filter((r) => r.completed).length,
      timedOut,
      timeoutMs: call.timeoutMs,
      durationMs: Math.round(performance.now() - started),
      items,
    };
  }

  private itemRequestId(caller: BatchCaller, i: number): string {
    return `${caller.requestId.slice(0, 120)}:${i}`;
  }

  /**
   * Resolves an item as the router will read it (`readItemPath`: no dot segments, backslashes or encoded
   * separators) to a GET proxy route of the interface it names. Anything else — the gateway's own endpoints,
   * the EMIS `Auth/…` calls, a path of no operation — is refused here and never injected; the item then runs
   * the canonical path of the route it resolved to, not the path as written.
   */
  private plan(item: BatchItem, i: number): ItemPlan {
    let path: ItemPath;
    try {
      path = readItemPath(item.path, `requests[${i}].path`);
    } catch (e) {
      if (e instanceof GatewayError) return { refusal: e };
      throw e;
    }
    const unserved = this.unserved.get(path.segments[0] ?? '');
    if (unserved)
      return {
        refusal: notConfigured(unserved),
      };
    const match = this.matcher.matchSegments('GET', path.segments);
    if (!match)
      return {
        refusal: new GatewayError('NOT_FOUND', {
          message:
            'A batch item must be a GET operation of an interface (/macro/…, /company/…, /documents/…, /deals/…).',
        }),
      };
    if (!match.route)
      return {
        refusal: new GatewayError('METHOD_NOT_ALLOWED', {
          message: 'This path takes no GET; a batch holds GETs only.',
        }),
      };
    if (match.route.file)
      return {
        route: match.route,
        refusal: new GatewayError('VALIDATION_FAILED', {
          parameter: `requests[${i}].path`,
          message: 'File downloads cannot be batched; fetch the file with its own call.',
        }),
      };
    return {
      route: match.route,
      url: canonicalItemUrl(path, match.route.path.endsWith('/')),
      params: match.params,
      query: path.query,
    };
  }

  /** Runs an item under a span of its own (when spans are exported): its vendor calls are that span's children. */
  private async runItem(
    item: BatchItem,
    plan: ItemPlan,
    i: number,
    caller: BatchCaller,
    signal: AbortSignal,
  ): Promise<BatchItemResult> {
    const { trace, span } = nestedTrace(caller.trace, 'batch item', {
      'atrium.batch.item': item.id,
      'atrium.batch.index': i,
      'atrium.route': plan.route?.id ?? 'unmatched',
    });
    if (span === undefined) return this.runItemAs(item, plan, i, caller, signal);
    try {
      const r = await this.runItemAs(item, plan, i, { ...caller, trace }, signal);
      endSpanWith(span, r.status, (r.body as { error?: { code?: unknown } } | undefined)?.error?.code);
      return r;
    } catch (e) {
      span.fail(e);
      span.end();
      throw e;
    }
  }

  private async runItemAs(
    item: BatchItem,
    plan: ItemPlan,
    i: number,
    caller: BatchCaller,
    signal: AbortSignal,
  ): Promise<BatchItemResult> {
    const started = performance.now();
    const requestId = this.itemRequestId(caller, i);
    const route = plan.route;
    const refuse = (err: GatewayError): BatchItemResult =>
      this.errorItem(item, requestId, err, true, started, route?.id);
    if (plan.refusal) return refuse(plan.refusal);

    try {
      const res = await this.caller.call(caller, {
        route: plan.route,
        url: plan.url,
        params: plan.params,
        query: parseQuery(plan.query),
        requestId,
        accept: item.headers.accept,
        acceptLanguage: item.headers['accept-language'],
        cacheControl: item.headers['cache-control'],
      });
      const out: Record<string, string> = {};
      for (const name of NOTE_HEADERS) {
        const v = headerValue(res.headers[name]);
        if (v !== undefined) out[name] = v;
      }
      for (const name in res.headers)
        if (name.startsWith('ratelimit')) out[name] = headerValue(res.headers[name])!;
      return {
        id: item.id,
        route: plan.route.id,
        completed: true,
        status: res.status,
        headers: out,
        ...decodeBody(res.body, out['content-type']),
        durationMs: Math.round(performance.now() - started),
      };
    } catch (e) {
      // Aborted at the deadline: run() reports the item as incomplete. Anything else is a gateway bug.
      if (!signal.aborted)
        this.logger.error(`errorId=${requestId} batch item failed: ${(e as Error).message}`);
      return refuse(new GatewayError('INTERNAL', { cause: e }));
    }
  }

  private incomplete(
    item: BatchItem,
    plan: ItemPlan,
    i: number,
    caller: BatchCaller,
    timeoutMs: number,
  ): BatchItemResult {
    const err = new GatewayError('UPSTREAM_TIMEOUT', {
      message: `The batch deadline (${timeoutMs} ms) passed before this item completed.`,
    });
    const r = this.errorItem(item, this.itemRequestId(caller, i), err, false, undefined);
    r.durationMs = timeoutMs;
    if (plan.route) r.route = plan.route.id;
    return r;
  }

  /** A gateway-made answer for an item (refused before it ran, or cut by the deadline): the usual envelope. */
  private errorItem(
    item: BatchItem,
    requestId: string,
    err: GatewayError,
    completed: boolean,
    started: number | undefined,
    route?: string,
  ): BatchItemResult {
    const body: Record<string, unknown> = { ...buildEnvelope(err, requestId) };
    const ext = this.shapes.forUrl(item.path);
    if (ext) Object.assign(body, ext.extend(err));
    return {
      id: item.id,
      ...(route ? { route } : {}),
      completed,
      status: err.status,
      headers: { 'content-type': 'application/json; charset=utf-8', 'x-request-id': requestId },
      body,
      bodyEncoding: 'json',
      durationMs: started === undefined ? 0 : Math.round(performance.now() - started),
    };
  }
}
