import type { Consumer } from '../core/auth/consumer.js';
import type { QueryPairs } from '../core/http/query-string.js';
import type { RequestTrace } from '../core/tracing/trace-context.js';
import type { RouteDefinition } from '../proxy/pipeline.types.js';

/** Who an internal call runs as: the consumer of the outer call (batch, view), by the key they presented. */
export interface RouteCallerIdentity {
  /** The consumer's gateway key, presented again so auth, permission and quota apply per call. */
  readonly key: string;
  /** The outer call's `Accept-Language`, when the inner call sets none of its own. */
  readonly acceptLanguage?: string;
  /** The outer call's trace: inner calls' vendor spans are its children. */
  readonly trace?: RequestTrace;
  /** The consumer the outer call's guard found for `key` (then not looked up again). */
  readonly consumer?: Consumer;
}

/** One GET of a proxy route, already resolved and checked (`architecture` §13: internal sub-requests). */
export interface RouteCall {
  readonly route: RouteDefinition;
  /** Canonical gateway URL with its query, e.g. `/macro/feeds?limit=2`; never a path as a caller wrote it. */
  readonly url: string;
  /** The URL's path parameters and query, when the caller built the URL from them (not read back from it). */
  readonly params?: Readonly<Record<string, string>>;
  readonly query?: QueryPairs;
  readonly requestId: string;
  readonly accept?: string;
  readonly acceptLanguage?: string;
  readonly cacheControl?: string;
  /** Aborted when the outer call stops waiting (its deadline). */
  readonly signal?: AbortSignal;
}

/** The answer exactly as a direct call would get it. */
export interface RouteCallResult {
  readonly status: number;
  /** Lower-case names, as sent to a client. */
  readonly headers: Readonly<Record<string, string | string[] | number | undefined>>;
  readonly body: Buffer;
}

/**
 * The port batch items and view parts go through: one GET as the calling consumer, through exactly what a
 * direct call runs through (guard, permission, quota, validation, pipeline, error envelope). The adapter
 * runs the proxy route's steps in process (direct-route-caller.ts).
 */
export interface RouteCaller {
  /** The answer, at once when it is known at once (a cache hit), else when it comes. */
  call(caller: RouteCallerIdentity, call: RouteCall): RouteCallResult | Promise<RouteCallResult>;
}

export const ROUTE_CALLER = Symbol('RouteCaller');
