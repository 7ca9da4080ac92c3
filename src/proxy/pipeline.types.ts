import type { Readable } from 'node:stream';
import type { GatewayError } from '../core/errors/gateway-error.js';
import type { ErrorCode } from '../core/errors/error-codes.js';
import type { QueryPairs } from '../core/http/query-string.js';
import type { WireFormat } from '../core/http/negotiation.js';
import type { ParamRules } from './canonical-request.js';
import type { RequestTrace } from '../core/tracing/trace-context.js';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export const WRITE_METHODS: ReadonlySet<HttpMethod> = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** One operation of an upstream interface, declared in that upstream's route table (typed code, reviewed). */
export interface RouteDefinition {
  /** Bounded identifier for logs and metric labels, e.g. `macro.feeds.list`. Never a raw path. */
  readonly id: string;
  readonly method: HttpMethod;
  /** Upstream path template in the spec's spelling, below the base URL: `/feeds/{id}`, `/Search/query/`. */
  readonly path: string;
  /** Resource family: TTL class and write invalidation scope (`feeds`, `layout`, `dictionary`). */
  readonly family: string;
  /** GET only: how long a 200 may be served from cache. Absent → never cached. */
  readonly cacheTtlMs?: number;
  /** A GET with a side effect (usage reports): never cached, coalesced or retried. */
  readonly sideEffect?: boolean;
  /** The answer is a file: streamed, never buffered whole, never cached, no 10 MB cap. */
  readonly file?: boolean;
  /** Upstream budget tokens one call spends (default 1). */
  readonly cost?: number;
  /** class-validator DTO for the query string (validated before any upstream call). */
  readonly query?: new () => object;
  /**
   * How the vendor reads the route's query parameters (lists, booleans, dates, stated defaults, header
   * forms): the canonical request that is both keyed and forwarded follows from it (canonical-request.ts).
   */
  readonly params?: ParamRules;
  readonly summary?: string;
}

/**
 * What travels down the pipeline: a stage passes it on, never writes onto it for another stage to read (only
 * the credentials stage rewrites its query and headers, for the upstream).
 */
export interface ProxyRequest {
  readonly upstream: string;
  readonly route: RouteDefinition;
  readonly method: HttpMethod;
  /** Path below the upstream's base URL, segments already encoded: `/series/1%2C2/data`. */
  path: string;
  /** Query pairs in the consumer's order, consumer credentials removed by the credentials stage. */
  query: QueryPairs;
  /** Headers to send upstream (lower-case names). Built from an allow-list, never copied wholesale. */
  headers: Record<string, string>;
  body?: Buffer;
  readonly consumerId: string;
  readonly requestId: string;
  readonly format: WireFormat;
  readonly lang?: string;
  /** Id of the upstream credential in use (never the secret): part of the cache key. */
  readonly credentialId: string;
  /** Epoch ms by which the whole call, retries included, must be answered. */
  readonly deadline: number;
  /** `Cache-Control: no-cache` from the consumer. */
  readonly noCache: boolean;
  /** Consumer weight for fair sharing of the upstream budget. */
  readonly weight: number;
  /** W3C trace context of the consumer's request (vendor calls carry it as `traceparent`). */
  readonly trace?: RequestTrace;
}

export type CacheOutcome = 'HIT' | 'MISS' | 'STALE' | 'COALESCED' | 'BYPASS';

export interface ProxyResponse {
  status: number;
  /** Headers for the client (lower-case), only those a client needs. */
  headers: Record<string, string>;
  /** Bytes for ordinary answers; a stream for file routes. */
  body: Buffer | Readable;
  cache?: CacheOutcome;
  ageSeconds?: number;
  /**
   * Set on answers of a cached route: seconds the answer stays fresh (its cache entry's time left), the
   * `max-age` a browser may reuse it for. The `etag` header then is the gateway's own validator of the bytes.
   */
  freshForSeconds?: number;
  /** Time spent waiting on the upstream, for logs and metrics. */
  upstreamMs?: number;
}

export type Handler = (req: ProxyRequest) => Promise<ProxyResponse>;
/** A pipeline stage, as in undici's interceptors: options are validated when the stage is built. */
export type Stage = (next: Handler) => Handler;

/** Reads a vendor's error body. Must never throw, whatever the body. */
export interface UpstreamErrorInfo {
  /** Override of the status-derived code (e.g. an EMIS auth error sent with HTTP 200). */
  code?: ErrorCode;
  upstreamCode?: string | number;
  message?: string;
}

export interface UpstreamErrorMapper {
  read(status: number, body: Buffer, contentType: string | undefined): UpstreamErrorInfo;
  /** For vendors that send errors with HTTP 2xx: whether this success body is really an error. */
  isErrorBody?(body: Buffer, contentType: string | undefined): boolean;
}

/** How an upstream takes its key. The consumer's own credentials are stripped before `inject` runs. */
export interface UpstreamCredentials {
  /** Non-secret id of the credential (cache keys, logs). */
  readonly id: string;
  inject(req: ProxyRequest): void | Promise<void>;
  /** The secret values currently in use, so answers and errors can be scrubbed of them. */
  secrets(): readonly string[];
  /** Called when the upstream rejected our credential; return true to retry the call once. */
  onAuthFailure?(req: ProxyRequest, err: GatewayError): Promise<boolean>;
  /** Called when the upstream accepted a call made with the credential `req` carried. */
  onAccepted?(req: ProxyRequest): void;
  close?(): Promise<void>;
}
