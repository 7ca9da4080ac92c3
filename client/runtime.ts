// The transport under the typed Atrium client (client/atrium-client.ts): openapi-fetch builds and sends each
// call; this file adds the key, the gateway's error envelope and the answer's cache facts. It runs in
// browsers and in Node ≥ 18 (global fetch).
import createClient, { createQuerySerializer } from 'openapi-fetch';

/** A query value; arrays go repeated (`k=a&k=b`) or comma-separated where the API documents lists so. */
export type QueryValue =
  string | number | boolean | null | undefined | ReadonlyArray<string | number | boolean>;

/** How an operation is called (generated per operation). */
export interface OperationInfo {
  readonly method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** Path template with `{name}` parameters, in the vendor's spelling (trailing slashes kept). */
  readonly path: string;
  /** `file`: the answer is read as a Blob; `text`: as a string. JSON otherwise. */
  readonly response?: 'file' | 'text';
  /** Query parameters sent comma-separated. */
  readonly csv?: readonly string[];
  /** Content types the operation takes; the first is the default. */
  readonly bodyTypes?: readonly string[];
}

export interface OperationParams {
  path?: Record<string, string | number>;
  query?: Record<string, QueryValue>;
  body?: unknown;
}

export interface AtriumClientOptions {
  /** The gateway, e.g. `https://atrium.internal` (no trailing slash needed). */
  readonly baseUrl: string;
  /** Your gateway key (sent as `Authorization: Bearer <key>`), or a function that returns it. */
  readonly apiKey?: string | (() => string | Promise<string>);
  /** Defaults to the global fetch. */
  readonly fetch?: typeof fetch;
  /** Sent with every request. */
  readonly headers?: Record<string, string>;
}

export interface RequestOptions {
  readonly signal?: AbortSignal;
  readonly headers?: Record<string, string>;
  /** Ask for a fresh answer (`Cache-Control: no-cache`); still coalesced and budgeted by the gateway. */
  readonly noCache?: boolean;
  /** Send a write's body as JSON or form-urlencoded instead of the operation's default (form for CEIC writes). */
  readonly bodyType?: 'json' | 'form';
}

export interface AtriumResponse<T> {
  readonly data: T;
  readonly status: number;
  readonly headers: Headers;
  /** `X-Cache`: HIT, MISS, STALE, COALESCED or BYPASS. */
  readonly cache?: string;
  readonly requestId?: string;
}

/** The gateway's error envelope, as thrown by every failed call. */
export interface AtriumErrorBody {
  code: string;
  message: string;
  status: number;
  upstream?: string;
  upstreamStatus?: number;
  upstreamCode?: string | number;
  parameter?: string;
  retryable: boolean;
  retryAfterSeconds?: number;
  requestId: string;
}

export class AtriumError extends Error {
  readonly status: number;
  readonly code: string;
  readonly retryable: boolean;
  readonly retryAfterSeconds?: number;
  readonly requestId?: string;
  /** The whole `error` object (undefined if the answer was not an envelope, e.g. a proxy's HTML page). */
  readonly body?: AtriumErrorBody;

  constructor(status: number, body: AtriumErrorBody | undefined, fallback: string) {
    super(body?.message ?? fallback);
    this.name = 'AtriumError';
    this.status = status;
    this.body = body;
    this.code = body?.code ?? `HTTP_${status}`;
    this.retryable = body?.retryable ?? status >= 500;
    this.retryAfterSeconds = body?.retryAfterSeconds;
    this.requestId = body?.requestId;
  }
}

/** A write's form body: lists go repeated (`k=a&k=b`), as CEIC's form endpoints take them. */
function formBody(body: unknown): string {
  const form = new URLSearchParams();
  if (body && typeof body === 'object')
    for (const [k, v] of Object.entries(body as Record<string, QueryValue>))
      for (const item of (Array.isArray(v) ? v : [v]) as ReadonlyArray<string | number | boolean | null>)
        if (item !== undefined && item !== null) form.append(k, String(item));
  return form.toString();
}

const repeated = createQuerySerializer();
const commaSeparated = createQuerySerializer({ array: { style: 'form', explode: false } });

/** The transport of the generated client: openapi-fetch sends the call; this adds the key and the envelopes. */
export abstract class AtriumClientBase<
  Ops extends { [K in keyof Ops]: { params: unknown; response: unknown } },
> {
  protected abstract readonly operations: { readonly [K in keyof Ops]: OperationInfo };
  /** openapi-fetch's `request`, untyped: AtriumClient's methods type each call by its operation. */
  private readonly request: (
    method: OperationInfo['method'],
    path: string,
    init: Record<string, unknown>,
  ) => Promise<{ data?: unknown; error?: unknown; response: Response }>;

  constructor(private readonly options: AtriumClientOptions) {
    const f = options.fetch ?? globalThis.fetch;
    if (!f) throw new Error('AtriumClient: no fetch available; pass options.fetch');
    const send = f.bind(globalThis);
    const client = createClient({ baseUrl: options.baseUrl.replace(/\/+$/, ''), fetch: (req) => send(req) });
    this.request = client.request as unknown as typeof this.request;
  }

  /** Calls an operation by id (the typed methods of AtriumClient call this). */
  async call<K extends keyof Ops & string>(
    id: K,
    params: Ops[K]['params'],
    options: RequestOptions = {},
  ): Promise<AtriumResponse<Ops[K]['response']>> {
    const info = this.operations[id];
    if (!info) throw new Error(`AtriumClient: unknown operation ${id}`);
    const p = (params ?? {}) as OperationParams;
    for (const [, name] of info.path.matchAll(/\{([^}]+)\}/g)) {
      const v = p.path?.[name];
      if (v === undefined || v === '') throw new Error(`AtriumClient: path parameter "${name}" is required`);
    }
    const csv = new Set(info.csv ?? []);

    const headers: Record<string, string> = { ...this.options.headers, ...options.headers };
    if (info.response !== 'file' && !headers.accept) headers.accept = 'application/json';
    const key = typeof this.options.apiKey === 'function' ? await this.options.apiKey() : this.options.apiKey;
    if (key) headers.authorization = `Bearer ${key}`;
    if (options.noCache) headers['cache-control'] = 'no-cache';

    const body = info.method === 'GET' ? undefined : p.body;
    // The operation's first documented content type, JSON when it documents none (e.g. POST /batch).
    const json =
      options.bodyType === 'json' ||
      (options.bodyType === undefined && (info.bodyTypes?.[0] ?? 'application/json') === 'application/json');
    if (body !== undefined)
      headers['content-type'] = json ? 'application/json' : 'application/x-www-form-urlencoded';

    const { data, error, response } = await this.request(info.method, info.path, {
      params: { path: p.path, query: p.query },
      body,
      bodySerializer: json ? (b: unknown) => JSON.stringify(b) : formBody,
      // Lists go repeated, except where the API documents them comma-separated.
      querySerializer: (query: Record<string, unknown>) =>
        Object.entries(query)
          .map(([k, v]) => (csv.has(k) ? commaSeparated : repeated)({ [k]: v }))
          .filter(Boolean)
          .join('&'),
      parseAs: info.response === 'file' ? 'blob' : 'text',
      headers,
      signal: options.signal,
    });
    const meta = {
      status: response.status,
      headers: response.headers,
      cache: response.headers.get('x-cache') ?? undefined,
      requestId: response.headers.get('x-request-id') ?? undefined,
    };
    if (!response.ok) {
      const envelope = isObject(error) ? (error as { error?: AtriumErrorBody }).error : undefined;
      throw new AtriumError(response.status, envelope, `HTTP ${response.status}`);
    }
    // openapi-fetch leaves an empty answer undefined; the client's answers keep their kind.
    let answer: unknown = data ?? (info.response === 'file' ? new Blob([]) : '');
    if (info.response === undefined && typeof answer === 'string' && answer) {
      const type = response.headers.get('content-type') ?? '';
      if (type.includes('json')) answer = JSON.parse(answer) as unknown;
    }
    return { ...meta, data: answer as Ops[K]['response'] };
  }
}

function isObject(v: unknown): v is object {
  return typeof v === 'object' && v !== null;
}
