import { buildEnvelope, type ErrorEnvelope } from '../core/errors/error-envelope.js';
import { GatewayError } from '../core/errors/gateway-error.js';
import { selectFields } from '../core/http/field-selection.js';
import { stringifyQuery, type QueryPairs } from '../core/http/query-string.js';
import { endSpanWith, nestedTrace } from '../core/tracing/trace-context.js';
import type { RouteCaller, RouteCallerIdentity, RouteCallResult } from '../route-calls/route-caller.js';
import type { ViewDefinition, ViewPart } from './view-definition.js';
import type { PartForm, PartForms } from './part-forms.js';
import { resolveTemplate, type TemplateContext } from './view-template.js';

/** How one part ended. */
export interface PartOutcome {
  readonly name: string;
  readonly status: number;
  /** `X-Cache` of the part's call (HIT, MISS, STALE, COALESCED, BYPASS), when it ran and was cacheable. */
  readonly cache?: string;
  readonly ageSeconds?: number;
  readonly durationMs: number;
  /** The part's answer on success (the whole answer: later parts read from it before its own `fields`). */
  readonly body?: unknown;
  /** The part's JSON answer with its compact text and digest (the view's answer and ETag are built from them). */
  readonly form?: PartForm;
  /** The error envelope on failure (the part's own, or one the view made: deadline, missing input). */
  readonly envelope?: ErrorEnvelope;
  readonly retryAfter?: string;
  /** How it ended, for metrics: the cache outcome, or error / timeout / skipped. */
  readonly result: string;
}

export interface ViewRun {
  readonly outcomes: ReadonlyMap<string, PartOutcome>;
  readonly timedOut: boolean;
  /** The required part that kept the view from running (its interface is not served). */
  readonly blockedBy?: string;
}

export interface ViewRunInput {
  readonly view: ViewDefinition;
  /** Validated parameter values (defaults applied). */
  readonly params: Readonly<Record<string, string | undefined>>;
  readonly caller: RouteCallerIdentity;
  readonly requestId: string;
  readonly timeoutMs: number;
  /** Interfaces this deployment does not serve: their parts do not run (404 UPSTREAM_NOT_CONFIGURED). */
  readonly unserved?: ReadonlySet<string>;
  /** Where the parts' JSON answers are read (and kept while their bytes live). */
  readonly forms: PartForms;
  /**
   * A required part whose interface is not served: the view cannot answer, so no other part runs either
   * (each is reported with that part's code), and the answer is the usual one of a failed required part.
   */
  readonly blockedBy?: { readonly part: string; readonly upstream: string };
  /** Parts whose calls ask the vendor, not the cache (`Cache-Control: no-cache`): a watch's poll, by name. */
  readonly noCacheParts?: ReadonlySet<string>;
}

const JSON_TYPE = /^application\/(?:[\w.+-]*\+)?json\b/i;

function header(res: RouteCallResult, name: string): string | undefined {
  const v = res.headers[name];
  if (v === undefined) return undefined;
  return Array.isArray(v) ? v.join(', ') : String(v);
}

function madeError(err: GatewayError, requestId: string, started: number, result: string): PartOutcome {
  return {
    name: '',
    status: err.status,
    durationMs: Math.round(performance.now() - started),
    envelope: buildEnvelope(err, requestId),
    result,
  };
}

/**
 * A part's path parameters from the view's parameters alone (a watch's release calendar reads them before
 * the view runs); undefined when its path reads an earlier part's answer or a value is absent.
 */
export function partPathParams(
  part: ViewPart,
  params: Readonly<Record<string, string | undefined>>,
): Readonly<Record<string, string>> | undefined {
  const out: Record<string, string> = {};
  for (const piece of part.pathPieces) {
    if (typeof piece === 'string') continue;
    const t = part.path[piece.param];
    if (!t || t.some((x) => typeof x !== 'string' && x.kind === 'part')) return undefined;
    const r = resolveTemplate(t, { params, parts: {} });
    if (!r.ok || typeof r.value !== 'string' || r.value === '') return undefined;
    out[piece.param] = r.value;
  }
  return out;
}

type PartTarget = { url: string; params: Record<string, string>; query: QueryPairs } | { missing: string };

/** The gateway URL of a part, or the reference it is missing. */
function partUrl(part: ViewPart, ctx: TemplateContext): PartTarget {
  let path = '';
  const params: Record<string, string> = {};
  for (const piece of part.pathPieces) {
    if (typeof piece === 'string') {
      path += piece;
      continue;
    }
    const r = resolveTemplate(part.path[piece.param], ctx);
    if (!r.ok) return { missing: r.missing };
    if (r.value === undefined || Array.isArray(r.value) || r.value === '')
      return { missing: `path parameter "${piece.param}"` };
    params[piece.param] = r.value as string;
    path += encodeURIComponent(r.value as string);
  }
  const pairs: QueryPairs = [];
  for (const [name, t] of part.query) {
    const r = resolveTemplate(t, ctx);
    if (!r.ok) return { missing: r.missing };
    if (r.value === undefined) continue;
    if (Array.isArray(r.value)) {
      const base = name.replace(/\[\d*\]$/, '');
      (r.value as string[]).forEach((v, i) => pairs.push([`${base}[${i}]`, v]));
    } else pairs.push([name, r.value as string]);
  }
  const q = stringifyQuery(pairs);
  // The parameters and pairs go along: the call need not read them back from the URL.
  return { url: `/${part.prefix}${path}${q ? `?${q}` : ''}`, params, query: pairs };
}

function outcomeOf(
  part: ViewPart,
  res: RouteCallResult,
  partRequestId: string,
  partStarted: number,
  forms: PartForms,
): PartOutcome {
  const type = header(res, 'content-type') ?? '';
  const form = JSON_TYPE.test(type) && res.body.length > 0 ? forms.of(res.body) : undefined;
  const body = form?.value;
  const cache = header(res, 'x-cache');
  const age = header(res, 'age');
  const common = {
    status: res.status,
    ...(cache ? { cache } : {}),
    ...(age !== undefined && /^\d+$/.test(age) ? { ageSeconds: Number(age) } : {}),
    durationMs: Math.round(performance.now() - partStarted),
  };
  if (res.status === 200 && body !== undefined)
    return { name: part.name, ...common, body, form, result: cache ?? 'BYPASS' };
  const envelope =
    typeof body === 'object' && body !== null && 'error' in body
      ? (body as ErrorEnvelope)
      : buildEnvelope(
          new GatewayError(res.status === 200 ? 'UPSTREAM_ERROR' : 'INTERNAL', {
            message: 'The part answered something other than JSON.',
          }),
          partRequestId,
        );
  const retryAfter = header(res, 'retry-after');
  return {
    name: part.name,
    ...common,
    status: res.status === 200 ? 502 : res.status,
    envelope,
    ...(retryAfter ? { retryAfter } : {}),
    result: 'error',
  };
}

/**
 * Runs a view's parts through the RouteCaller as the calling consumer: every part starts as soon as the
 * parts it reads have answered (parts without inputs at once, in parallel), all under one deadline. A part
 * whose input part failed, or whose input value is absent, does not run.
 */
export function runView(caller: RouteCaller, input: ViewRunInput): Promise<ViewRun> {
  const { view, requestId } = input;
  // Set at the deadline: parts not yet started do not start.
  let aborted = false;
  const outcomes = new Map<string, PartOutcome>();
  const answers: Record<string, unknown> = {};
  const ctx: TemplateContext = { params: input.params, parts: answers };
  const running = new Map<string, Promise<PartOutcome>>();
  const started = performance.now();

  const runPart = async (
    part: ViewPart,
    i: number,
    deps: readonly PartOutcome[],
    as: RouteCallerIdentity,
  ): Promise<PartOutcome> => {
    const partStarted = performance.now();
    const partRequestId = `${requestId.slice(0, 120)}:${i}`;
    const failed = deps.find((d) => d.status !== 200);
    if (failed) {
      const e = failed.envelope?.error;
      const err = new GatewayError('UPSTREAM_ERROR', {
        message: `Not run: part "${failed.name}", whose answer it reads, failed.`,
      });
      const env = buildEnvelope(err, partRequestId);
      if (e) Object.assign(env.error, { code: e.code, status: e.status, retryable: e.retryable });
      return {
        ...madeError(err, partRequestId, partStarted, 'skipped'),
        status: failed.status,
        envelope: env,
      };
    }
    if (input.unserved?.has(part.upstream))
      return madeError(
        new GatewayError('UPSTREAM_NOT_CONFIGURED', {
          upstream: part.upstream,
          message: `Not run: this deployment does not serve the ${part.upstream} interface.`,
        }),
        partRequestId,
        partStarted,
        'skipped',
      );
    const blocked = input.blockedBy;
    if (blocked)
      return madeError(
        new GatewayError('UPSTREAM_NOT_CONFIGURED', {
          upstream: blocked.upstream,
          message: `Not run: the view cannot answer without part "${blocked.part}", whose ${blocked.upstream} interface this deployment does not serve.`,
        }),
        partRequestId,
        partStarted,
        'skipped',
      );
    const target = partUrl(part, ctx);
    if ('missing' in target)
      return madeError(
        new GatewayError('NOT_FOUND', { message: `Not run: ${target.missing} has no usable value.` }),
        partRequestId,
        partStarted,
        'skipped',
      );
    if (aborted)
      return madeError(new GatewayError('UPSTREAM_TIMEOUT'), partRequestId, partStarted, 'timeout');
    const res = await caller.call(as, {
      route: part.route,
      url: target.url,
      params: target.params,
      query: target.query,
      requestId: partRequestId,
      ...(input.noCacheParts?.has(part.name) && { cacheControl: 'no-cache' }),
    });
    return outcomeOf(part, res, partRequestId, partStarted, input.forms);
  };

  const start = async (part: ViewPart, i: number): Promise<PartOutcome> => {
    let o: PartOutcome;
    // A part that reads none starts at once, without waiting a turn for an empty list.
    const deps = part.dependsOn.length ? await Promise.all(part.dependsOn.map((d) => running.get(d)!)) : [];
    // The part's own span (when spans are exported) from when its inputs are ready: its vendor calls are
    // its children, and carry its id in their traceparent.
    const { trace, span } = nestedTrace(input.caller.trace, 'view part', {
      'atrium.view': view.name,
      'atrium.view.part': part.name,
      'atrium.route': part.route.id,
      'atrium.upstream': part.upstream,
    });
    try {
      o = await runPart(part, i, deps, span ? { ...input.caller, trace } : input.caller);
    } catch (e) {
      const err = aborted ? new GatewayError('UPSTREAM_TIMEOUT') : new GatewayError('INTERNAL', { cause: e });
      o = { ...madeError(err, requestId, started, aborted ? 'timeout' : 'error'), name: part.name };
      if (span) endSpanWith(span, o.status, o.envelope?.error.code);
      return o;
    }
    if (span) {
      span.setAttribute('atrium.result', o.result);
      endSpanWith(span, o.status, o.envelope?.error.code);
    }
    const named = o.name === part.name ? o : { ...o, name: part.name };
    if (!aborted) {
      outcomes.set(part.name, named);
      if (named.status === 200 && named.body !== undefined) answers[part.name] = named.body;
    }
    return named;
  };

  // Every part after those it reads: a part's inputs are in `running` when it starts.
  for (const i of view.runOrder) running.set(view.parts[i].name, start(view.parts[i], i));
  return settleWithin(input, running, () => (aborted = true), outcomes, started);
}

/** Waits for the parts until the deadline; parts not answered by then are timeouts. */
async function settleWithin(
  input: ViewRunInput,
  running: ReadonlyMap<string, Promise<PartOutcome>>,
  abort: () => void,
  outcomes: Map<string, PartOutcome>,
  started: number,
): Promise<ViewRun> {
  const { view, requestId } = input;
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, input.timeoutMs);
  });
  await Promise.race([Promise.all(running.values()), deadline]);
  clearTimeout(timer);
  const timedOut = outcomes.size < view.parts.length;
  if (timedOut) abort();
  for (const [i, part] of view.parts.entries())
    if (!outcomes.has(part.name)) {
      const err = new GatewayError('UPSTREAM_TIMEOUT', {
        message: `The view deadline (${input.timeoutMs} ms) passed before this part answered.`,
      });
      outcomes.set(part.name, {
        ...madeError(err, `${requestId.slice(0, 120)}:${i}`, started, 'timeout'),
        name: part.name,
        durationMs: input.timeoutMs,
      });
    }
  return { outcomes, timedOut, ...(input.blockedBy && { blockedBy: input.blockedBy.part }) };
}

/** A part's data as it appears in the answer: its own field selection applied. */
export function partData(part: ViewPart, outcome: PartOutcome): unknown {
  if (outcome.status !== 200) return null;
  return part.fields ? selectFields(outcome.body, part.fields) : outcome.body;
}
