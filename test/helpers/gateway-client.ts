import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Agent, request, type Dispatcher } from 'undici';

/** One consumer answer as the client saw it, with its wall time (first byte sent → last byte or error). */
export interface Answer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
  text: string;
  /** Set when the transfer broke (reset, truncated body): the client got less than it was promised. */
  error?: string;
  ms: number;
  /** The longest stall of this process's event loop during the call (`stallMeter`). */
  stallMs: number;
}

/**
 * Starts measuring the longest stall of this process's event loop; `stop()` gives it in ms, past the 10 ms
 * sampling. A gateway running in this process answers nothing during a stall (a major GC, the scheduler
 * while the whole suite loads both cores), so deadline checks allow it on top of their slack.
 */
export function stallMeter(): { stop: () => number } {
  const h = monitorEventLoopDelay({ resolution: 10 });
  h.enable();
  return {
    stop: () => {
      h.disable();
      return Math.max(0, h.max / 1e6 - 10);
    },
  };
}

const agent = new Agent({ keepAliveTimeout: 10_000, connections: 64 });

/** A consumer call that never throws: transport failures and broken bodies become part of the answer. */
export async function call(
  url: string,
  opts: {
    method?: Dispatcher.HttpMethod;
    headers?: Record<string, string>;
    body?: string | Buffer;
    /** The client gives up after this long (default 20 s): a hang shows as an error, never as a stuck test. */
    timeoutMs?: number;
  } = {},
): Promise<Answer> {
  const started = performance.now();
  const stalls = stallMeter();
  let status = 0;
  const headers: Record<string, string> = {};
  const chunks: Buffer[] = [];
  let error: string | undefined;
  try {
    const res = await request(url, {
      method: opts.method ?? 'GET',
      headers: opts.headers,
      body: opts.body,
      dispatcher: agent,
      signal: AbortSignal.timeout(opts.timeoutMs ?? 20_000),
    });
    status = res.statusCode;
    for (const [k, v] of Object.entries(res.headers))
      headers[k] = Array.isArray(v) ? v.join(', ') : String(v);
    try {
      for await (const c of res.body) chunks.push(c as Buffer);
    } catch (e) {
      error = (e as Error).message || String(e);
    }
  } catch (e) {
    error = (e as Error).message || String(e);
  }
  const body = Buffer.concat(chunks);
  const declared = headers['content-length'];
  if (!error && declared !== undefined && Number(declared) !== body.length)
    error = `body of ${body.length} bytes, ${declared} declared`;
  const ms = performance.now() - started;
  const stallMs = stalls.stop();
  return { status, headers, body, text: body.toString('utf8'), error, ms, stallMs };
}

export interface EnvelopeCheck {
  ok: boolean;
  problem?: string;
  code?: string;
  upstream?: string;
  upstreamCode?: string | number;
  upstreamStatus?: number;
  retryAfterSeconds?: number;
}

/**
 * Whether an error answer is the gateway's one envelope: JSON (or XML) with `error.code`, `error.status`
 * equal to the HTTP status and `error.requestId` equal to the `x-request-id` header.
 */
export function checkEnvelope(a: Pick<Answer, 'status' | 'headers' | 'text'>): EnvelopeCheck {
  const rid = a.headers['x-request-id'];
  if (!rid) return { ok: false, problem: `${a.status} without x-request-id` };
  const type = a.headers['content-type'] ?? '';
  if (type.includes('xml')) {
    const code = /<code>([A-Z_]+)<\/code>/.exec(a.text)?.[1];
    const status = /<status>(\d+)<\/status>/.exec(a.text)?.[1];
    const requestId = /<requestId>([^<]*)<\/requestId>/.exec(a.text)?.[1];
    if (!code || Number(status) !== a.status || requestId !== rid)
      return { ok: false, problem: `${a.status} XML body is not the envelope: ${a.text.slice(0, 160)}` };
    const upstreamStatus = /<upstreamStatus>(\d+)<\/upstreamStatus>/.exec(a.text)?.[1];
    return {
      ok: true,
      code,
      upstream: /<upstream>([^<]*)<\/upstream>/.exec(a.text)?.[1],
      upstreamCode: /<upstreamCode>([^<]*)<\/upstreamCode>/.exec(a.text)?.[1],
      upstreamStatus: upstreamStatus === undefined ? undefined : Number(upstreamStatus),
    };
  }
  let doc: { error?: Record<string, unknown> };
  try {
    doc = JSON.parse(a.text) as typeof doc;
  } catch {
    return { ok: false, problem: `${a.status} body is not JSON: ${JSON.stringify(a.text.slice(0, 160))}` };
  }
  const e = doc?.error;
  if (!e || typeof e !== 'object' || typeof e.code !== 'string')
    return { ok: false, problem: `${a.status} body has no error.code: ${a.text.slice(0, 160)}` };
  if (e.status !== a.status)
    return { ok: false, problem: `error.status ${String(e.status)} ≠ HTTP ${a.status}` };
  if (e.requestId !== rid) return { ok: false, problem: `error.requestId ≠ x-request-id` };
  return {
    ok: true,
    code: e.code,
    upstream: e.upstream as string | undefined,
    upstreamCode: e.upstreamCode as string | number | undefined,
    upstreamStatus: e.upstreamStatus as number | undefined,
    retryAfterSeconds: e.retryAfterSeconds as number | undefined,
  };
}
