// The small fetch wrapper under the generated Atrium client (client/generated/api.ts). Hand-written and
// dependency-free: it runs in browsers and in Node ≥ 18 (global fetch).

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

function appendQuery(params: URLSearchParams, name: string, value: QueryValue, csv: boolean): void {
  if (value === undefined || value === null) return;
  if (Array.isArray(value)) {
    const items = (value as ReadonlyArray<string | number | boolean>).map(String);
    if (csv) params.append(name, items.join(','));
    else for (const v of items) params.append(name, v);
    return;
  }
  params.append(name, String(value));
}

function formBody(body: unknown): string {
  const params = new URLSearchParams();
  if (body && typeof body === 'object')
    for (const [k, v] of Object.entries(body as Record<string, QueryValue>)) appendQuery(params, k, v, false);
  return params.toString();
}

/** The transport of the generated client: builds the URL, sends the key, reads answers and envelopes. */
export abstract class AtriumClientBase<
  Ops extends { [K in keyof Ops]: { params: unknown; response: unknown } },
> {
  protected abstract readonly operations: { readonly [K in keyof Ops]: OperationInfo };
  private readonly base: string;
  private readonly fetchImpl: typeof fetch;

  constructor(private readonly options: AtriumClientOptions) {
    this.base = options.baseUrl.replace(/\/+$/, '');
    const f = options.fetch ?? globalThis.fetch;
    if (!f) throw new Error('AtriumClient: no fetch available; pass options.fetch');
    this.fetchImpl = f.bind(globalThis);
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
    const path = info.path.replace(/\{([^}]+)\}/g, (_m, name: string) => {
      const v = p.path?.[name];
      if (v === undefined || v === '') throw new Error(`AtriumClient: path parameter "${name}" is required`);
      return encodeURIComponent(String(v));
    });
    const query = new URLSearchParams();
    const csv = new Set(info.csv ?? []);
    for (const [k, v] of Object.entries(p.query ?? {})) appendQuery(query, k, v, csv.has(k));
    const qs = query.toString();

    const headers: Record<string, string> = { ...this.options.headers, ...options.headers };
    if (info.response !== 'file' && !headers.accept) headers.accept = 'application/json';
    const key = typeof this.options.apiKey === 'function' ? await this.options.apiKey() : this.options.apiKey;
    if (key) headers.authorization = `Bearer ${key}`;
    if (options.noCache) headers['cache-control'] = 'no-cache';

    let body: string | undefined;
    if (p.body !== undefined && info.method !== 'GET') {
      // The operation's first documented content type, JSON when it documents none (e.g. POST /batch).
      const json =
        options.bodyType === 'json' ||
        (options.bodyType === undefined &&
          (info.bodyTypes?.[0] ?? 'application/json') === 'application/json');
      body = json ? JSON.stringify(p.body) : formBody(p.body);
      headers['content-type'] = json ? 'application/json' : 'application/x-www-form-urlencoded';
    }

    const res = await this.fetchImpl(this.base + path + (qs ? `?${qs}` : ''), {
      method: info.method,
      headers,
      body,
      signal: options.signal,
    });
    const meta = {
      status: res.status,
      headers: res.headers,
      cache: res.headers.get('x-cache') ?? undefined,
      requestId: res.headers.get('x-request-id') ?? undefined,
    };
    if (!res.ok) {
      const text = await res.text();
      let envelope: AtriumErrorBody | undefined;
      try {
        envelope = (JSON.parse(text) as { error?: AtriumErrorBody }).error;
      } catch {
        envelope = undefined;
      }
      throw new AtriumError(res.status, envelope, `HTTP ${res.status}`);
    }
    let data: unknown;
    if (info.response === 'file') data = await res.blob();
    else if (info.response === 'text') data = await res.text();
    else {
      const text = await res.text();
      const type = res.headers.get('content-type') ?? '';
      data = text && type.includes('json') ? (JSON.parse(text) as unknown) : text;
    }
    return { ...meta, data: data as Ops[K]['response'] };
  }
}
