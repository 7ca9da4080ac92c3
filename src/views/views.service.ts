import { Inject, Injectable } from '@nestjs/common';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';
import { GatewayError } from '../core/errors/gateway-error.js';
import type { FieldSelection } from '../core/http/field-selection.js';
import type { QueryPairs } from '../core/http/query-string.js';
import { RouteCaller, type RouteCallerIdentity } from '../route-calls/route-caller.js';
import { etagMatches } from '../core/http/etag.js';
import { composeAnswer, type ViewAnswer } from './view-answer.js';
import type { ViewDefinition } from './view-definition.js';
import { readViewRequest } from './view-request.js';
import { PartForms } from './part-forms.js';
import { runView, type ViewRun } from './view-runner.js';
import { ViewsMetrics, type ViewCounts } from './views.metrics.js';
import { ViewsRegistry } from './views.registry.js';

export interface ViewCall {
  readonly name: string;
  readonly query: QueryPairs;
  readonly caller: RouteCallerIdentity;
  readonly requestId: string;
  readonly ifNoneMatch?: string;
  /** Parts asked of the vendor rather than the cache (a watch polling around a release). */
  readonly noCacheParts?: ReadonlySet<string>;
}

interface UnservedParts {
  readonly names: ReadonlySet<string>;
  /** The first required part that reads an interface not served: the view fails on it. */
  readonly blockedBy?: { readonly part: string; readonly upstream: string };
}

/** What the controller sends: an answer, or 304 for a matching `If-None-Match`. */
export type ViewResult = ViewAnswer & { readonly notModified: boolean };

/** One entry of `GET /views`. */
export interface ViewListing {
  name: string;
  description: string;
  parameters: Array<{
    name: string;
    type: string;
    required: boolean;
    description?: string;
    pattern?: string;
    enum?: readonly string[];
    default?: string;
    example?: string;
  }>;
  parts: Array<{ name: string; route: string; interface: string; optional: boolean; step: number }>;
  timeoutMs: number;
  exampleUrl: string;
}

/** A view and its calls since start, for the operator console. */
export interface ViewStats extends ViewCounts {
  name: string;
  description: string;
  parts: number;
  exampleUrl: string;
}

/** The example URL of a view: its path with every parameter that has an example. */
export function exampleUrlOf(view: ViewDefinition): string {
  const q = view.params
    .filter((p) => p.example !== undefined)
    .map((p) => `${encodeURIComponent(p.name)}=${encodeURIComponent(p.example!)}`)
    .join('&');
  return `/views/${view.name}${q ? `?${q}` : ''}`;
}

/** Runs composite views (README "Composite views"): validation, the parts, the one answer, metrics. */
@Injectable()
export class ViewsService {
  constructor(
    readonly registry: ViewsRegistry,
    private readonly metrics: ViewsMetrics,
    private readonly caller: RouteCaller,
    @Inject(ATRIUM_CONFIG) private readonly config: AtriumConfig,
  ) {}

  /** The parts' JSON answers, read once per answer's bytes (see PartForms). */
  private readonly forms = new PartForms();

  /** Per view (the config does not change): the interfaces it reads that are not served, once. */
  private readonly unserved = new WeakMap<ViewDefinition, UnservedParts | null>();

  private unservedOf(view: ViewDefinition): UnservedParts | null {
    let u = this.unserved.get(view);
    if (u === undefined) {
      const names = new Set(view.parts.map((p) => p.upstream).filter((n) => !this.config.upstreams[n]));
      const needed = view.parts.find((p) => !p.optional && names.has(p.upstream));
      u = names.size
        ? {
            names,
            // A required part that cannot run: the view fails on it, as on any failed required part.
            ...(needed && { blockedBy: { part: needed.name, upstream: needed.upstream } }),
          }
        : null;
      this.unserved.set(view, u);
    }
    return u;
  }

  timeoutOf(view: ViewDefinition): number {
    return view.timeoutMs ?? this.config.views.timeoutMs;
  }

  list(): ViewListing[] {
    return this.registry.all().map((v) => ({
      name: v.name,
      description: v.description,
      parameters: v.params.map((p) => ({
        name: p.name,
        type: p.type,
        required: p.required,
        ...(p.description ? { description: p.description } : {}),
        ...(p.pattern ? { pattern: p.pattern.source } : {}),
        ...(p.enum ? { enum: p.enum } : {}),
        ...(p.default !== undefined ? { default: p.default } : {}),
        ...(p.example !== undefined ? { example: p.example } : {}),
      })),
      parts: v.parts.map((p) => ({
        name: p.name,
        route: p.route.id,
        interface: p.upstream,
        optional: p.optional,
        step: p.step,
      })),
      timeoutMs: this.timeoutOf(v),
      exampleUrl: exampleUrlOf(v),
    }));
  }

  stats(): ViewStats[] {
    return this.registry.all().map((v) => ({
      name: v.name,
      description: v.description,
      parts: v.parts.length,
      exampleUrl: exampleUrlOf(v),
      ...this.metrics.countsOf(v.name),
    }));
  }

  /** One view call. */
  async run(call: ViewCall): Promise<ViewResult> {
    const started = performance.now();
    const view = this.registry.get(call.name);
    if (!view)
      throw new GatewayError('NOT_FOUND', {
        message: `No view named "${call.name}"; GET /views lists them.`,
      });
    const unserved = this.unservedOf(view);
    const request = readViewRequest(view, call.query, {
      defaultMs: this.timeoutOf(view),
      maxMs: this.config.views.maxTimeoutMs,
    });
    const run = await runView(this.caller, {
      view,
      params: request.params,
      caller: call.caller,
      requestId: call.requestId,
      timeoutMs: request.timeoutMs,
      forms: this.forms,
      ...(unserved && { unserved: unserved.names }),
      ...(unserved?.blockedBy && { blockedBy: unserved.blockedBy }),
      ...(call.noCacheParts?.size && { noCacheParts: call.noCacheParts }),
    });
    return this.answer(view, call, request.fields, run, started);
  }

  private answer(
    view: ViewDefinition,
    call: ViewCall,
    fields: FieldSelection | undefined,
    run: ViewRun,
    started: number,
  ): ViewResult {
    for (const [part, o] of run.outcomes) this.metrics.recordPart(view.name, part, o.result);
    const answer = composeAnswer(view, run, fields);
    const notModified = answer.etag !== undefined && etagMatches(call.ifNoneMatch, answer.etag);
    this.metrics.recordCall(
      view.name,
      notModified ? 'not_modified' : answer.failedPart ? 'failed' : answer.complete ? 'complete' : 'partial',
      (performance.now() - started) / 1000,
    );
    return { ...answer, notModified };
  }
}
