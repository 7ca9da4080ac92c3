import { connect, type Socket } from 'node:net';
import autocannon from 'autocannon';
import { md5 } from './payloads.js';

export interface LoadSpec {
  readonly url: string;
  /** A fixed path, or a function called once per request (unique keys). */
  readonly path: string | (() => string);
  readonly headers: Record<string, string>;
  readonly connections: number;
  readonly durationS: number;
}

export interface LatencySummary {
  p50: number;
  p99: number;
  mean: number;
  max: number;
}

export interface LoadResult {
  /** Responses received during the run. */
  requests: number;
  wallS: number;
  reqPerSec: number;
  errors: number;
  timeouts: number;
  statusCounts: Record<string, number>;
  /** All responses, whatever their status (ms, sub-millisecond precision). */
  latencyMs: LatencySummary;
}

/** Growable Float64Array: one latency per response without boxing 100k numbers. */
class Samples {
  private buf = new Float64Array(1 << 16);
  length = 0;
  push(v: number): void {
    if (this.length === this.buf.length) {
      const next = new Float64Array(this.buf.length * 2);
      next.set(this.buf);
      this.buf = next;
    }
    this.buf[this.length++] = v;
  }
  summary(): LatencySummary {
    if (this.length === 0) return { p50: 0, p99: 0, mean: 0, max: 0 };
    const s = this.buf.slice(0, this.length).sort();
    const at = (q: number) => s[Math.min(s.length - 1, Math.ceil(q * s.length) - 1)];
    let sum = 0;
    for (const v of s) sum += v;
    const round = (v: number) => Math.round(v * 1000) / 1000;
    return {
      p50: round(at(0.5)),
      p99: round(at(0.99)),
      mean: round(sum / s.length),
      max: round(s[s.length - 1]),
    };
  }
}

/**
 * Closed-loop load with autocannon in this (the runner's) process: `connections` keep-alive connections,
 * one request in flight on each. Latencies are recorded from autocannon's per-response events at
 * sub-millisecond precision (its own histogram rounds to whole milliseconds).
 */
export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  const samples = new Samples();
  const statusCounts: Record<string, number> = {};
  const dynamic = typeof spec.path === 'function' ? spec.path : undefined;
  const firstPath = dynamic ? dynamic() : (spec.path as string);
  const started = performance.now();
  const instance = autocannon({
    url: spec.url,
    connections: spec.connections,
    pipelining: 1,
    duration: spec.durationS,
    timeout: 10,
    headers: spec.headers,
    requests: [
      {
        method: 'GET',
        path: firstPath,
        ...(dynamic ? { setupRequest: (req) => ({ ...req, path: dynamic() }) } : {}),
      },
    ],
  });
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => {
    samples.push(ms);
    statusCounts[status] = (statusCounts[status] ?? 0) + 1;
  });
  const result = await instance;
  const wallS = (performance.now() - started) / 1000;
  return {
    requests: samples.length,
    wallS,
    reqPerSec: samples.length / wallS,
    errors: result.errors,
    timeouts: result.timeouts,
    statusCounts,
    latencyMs: samples.summary(),
  };
}

export interface HttpAnswer {
  status: number;
  headers: Record<string, string>;
  body: Buffer;
}

/** Parses one HTTP/1.1 answer read to the end of a `Connection: close` exchange. */
export function parseAnswer(raw: Buffer): HttpAnswer {
  const end = raw.indexOf('\r\n\r\n');
  if (end < 0) throw new Error('incomplete HTTP answer');
  const head = raw.subarray(0, end).toString('latin1').split('\r\n');
  const status = Number(/^HTTP\/1\.[01] (\d{3})/.exec(head[0])?.[1] ?? 0);
  const headers: Record<string, string> = {};
  for (const line of head.slice(1)) {
    const i = line.indexOf(':');
    if (i > 0) headers[line.slice(0, i).trim().toLowerCase()] = line.slice(i + 1).trim();
  }
  let body = raw.subarray(end + 4);
  if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
    const parts: Buffer[] = [];
    let at = 0;
    for (;;) {
      const eol = body.indexOf('\r\n', at);
      if (eol < 0) break;
      const len = parseInt(body.subarray(at, eol).toString('latin1'), 16);
      if (!(len > 0)) break;
      parts.push(body.subarray(eol + 2, eol + 2 + len));
      at = eol + 2 + len + 2;
    }
    body = Buffer.concat(parts);
  } else if (headers['content-length'] !== undefined) {
    body = body.subarray(0, Number(headers['content-length']));
  }
  return { status, headers, body };
}

export interface BurstResult {
  clients: number;
  statusCounts: Record<string, number>;
  /** md5 → how many clients got that body. */
  bodies: Record<string, number>;
  errors: number;
  /** From the moment the requests were written to the last answer. */
  wallMs: number;
}

function openSocket(port: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    const s = connect({ host: '127.0.0.1', port }, () => {
      s.off('error', reject);
      resolve(s);
    });
    s.once('error', reject);
    s.setNoDelay(true);
  });
}

/**
 * `clients` concurrent clients asking for one path at once: every connection is opened first, then every
 * request is written in the same tick, so all of them are in flight before the first answer can arrive.
 */
export async function burst(
  port: number,
  path: string,
  headers: Record<string, string>,
  clients: number,
  timeoutMs = 60_000,
): Promise<BurstResult> {
  const sockets: Socket[] = [];
  // Batches keep the SYNs within the listen backlog (511 by default).
  for (let i = 0; i < clients; i += 100)
    sockets.push(
      ...(await Promise.all(Array.from({ length: Math.min(100, clients - i) }, () => openSocket(port)))),
    );
  const head =
    `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\n` +
    Object.entries(headers)
      .map(([k, v]) => `${k}: ${v}\r\n`)
      .join('') +
    'Connection: close\r\n\r\n';
  const request = Buffer.from(head, 'latin1');
  let last = 0;
  const answers = sockets.map(
    (s) =>
      new Promise<HttpAnswer | undefined>((resolve) => {
        const chunks: Buffer[] = [];
        const timer = setTimeout(() => s.destroy(new Error('timeout')), timeoutMs);
        s.on('data', (c: Buffer) => chunks.push(c));
        s.on('error', () => {
          // 'close' follows with hadError set
        });
        s.once('close', (hadError: boolean) => {
          clearTimeout(timer);
          last = performance.now();
          try {
            resolve(hadError ? undefined : parseAnswer(Buffer.concat(chunks)));
          } catch {
            resolve(undefined);
          }
        });
      }),
  );
  const started = performance.now();
  for (const s of sockets) s.write(request);
  const results = await Promise.all(answers);
  const statusCounts: Record<string, number> = {};
  const bodies: Record<string, number> = {};
  let errors = 0;
  for (const a of results) {
    if (!a) {
      errors++;
      continue;
    }
    statusCounts[a.status] = (statusCounts[a.status] ?? 0) + 1;
    const h = md5(a.body);
    bodies[h] = (bodies[h] ?? 0) + 1;
  }
  return { clients, statusCounts, bodies, errors, wallMs: Math.round((last - started) * 10) / 10 };
}
