import { connect } from 'node:net';

/** One HTTP/1.1 answer read off a raw socket. */
export interface RawResponse {
  status: number;
  /** Lower-case names; repeated headers joined with ", ". */
  headers: Record<string, string>;
  body: Buffer;
  text: string;
}

export interface RawExchange {
  responses: RawResponse[];
  /** The connection ended (or the time ran out) before `expect` answers arrived. */
  incomplete: boolean;
  /** Bytes after the last complete answer that do not parse as HTTP. */
  garbage?: string;
  error?: string;
}

const CRLFCRLF = Buffer.from('\r\n\r\n');

/**
 * Parses as many complete answers as `buf` holds. `methods[i]` is the method of the i-th request on the
 * connection (a HEAD answer has no body). Returns the answers, how many bytes they used, and a problem when
 * the bytes after them are not HTTP.
 */
export function parseResponses(
  buf: Buffer,
  methods: readonly string[],
  already: number,
  closed: boolean,
): { responses: RawResponse[]; used: number; problem?: string } {
  const out: RawResponse[] = [];
  let at = 0;
  for (;;) {
    const end = buf.indexOf(CRLFCRLF, at);
    if (end === -1) break;
    const head = buf.subarray(at, end).toString('latin1');
    const lines = head.split('\r\n');
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(lines[0]);
    if (!m)
      return {
        responses: out,
        used: at,
        problem: `not an HTTP status line: ${JSON.stringify(lines[0].slice(0, 80))}`,
      };
    const status = Number(m[1]);
    const headers: Record<string, string> = {};
    for (const line of lines.slice(1)) {
      const c = line.indexOf(':');
      if (c <= 0) continue;
      const k = line.slice(0, c).trim().toLowerCase();
      const v = line.slice(c + 1).trim();
      headers[k] = headers[k] === undefined ? v : `${headers[k]}, ${v}`;
    }
    let pos = end + 4;
    if (status >= 100 && status < 200) {
      at = pos;
      continue;
    }
    const method = methods[already + out.length] ?? 'GET';
    let body: Buffer;
    if (method === 'HEAD' || status === 204 || status === 304) body = Buffer.alloc(0);
    else if (/chunked/i.test(headers['transfer-encoding'] ?? '')) {
      const parts: Buffer[] = [];
      let p = pos;
      let done = false;
      for (;;) {
        const le = buf.indexOf('\r\n', p);
        if (le === -1) break;
        const size = parseInt(buf.subarray(p, le).toString('latin1'), 16);
        if (Number.isNaN(size)) return { responses: out, used: at, problem: 'bad chunk size' };
        if (buf.length < le + 2 + size + 2) break;
        if (size === 0) {
          // Trailers (if any) end with an empty line.
          const te = buf.indexOf(CRLFCRLF, le);
          if (te === -1) break;
          p = te + 4;
          done = true;
          break;
        }
        parts.push(buf.subarray(le + 2, le + 2 + size));
        p = le + 2 + size + 2;
      }
      if (!done) break;
      body = Buffer.concat(parts);
      pos = p;
    } else if (headers['content-length'] !== undefined) {
      const len = Number(headers['content-length']);
      if (buf.length < pos + len) break;
      body = buf.subarray(pos, pos + len);
      pos += len;
    } else {
      // No length: the body runs to the end of the connection.
      if (!closed) break;
      body = buf.subarray(pos);
      pos = buf.length;
    }
    out.push({ status, headers, body, text: body.toString('utf8') });
    at = pos;
  }
  return { responses: out, used: at };
}

/**
 * Writes `requests` on one connection (pipelined when several) and reads answers until `expect` of them
 * arrived, the server closed the connection, or `timeoutMs` passed. Nothing is tidied: the bytes go out
 * exactly as given.
 */
export function exchange(
  port: number,
  requests: readonly Buffer[],
  methods: readonly string[],
  expect: number,
  timeoutMs = 15_000,
): Promise<RawExchange> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    let buf: Buffer = Buffer.alloc(0);
    const responses: RawResponse[] = [];
    let settled = false;
    let error: string | undefined;
    const finish = (closed: boolean) => {
      if (settled) return;
      let garbage: string | undefined;
      const r = parseResponses(buf, methods, responses.length, closed);
      responses.push(...r.responses);
      buf = buf.subarray(r.used);
      if (r.problem) {
        garbage = `${r.problem}: ${buf.subarray(0, 200).toString('latin1')}`;
        closed = true;
      } else if (closed && buf.length > 0) garbage = buf.subarray(0, 200).toString('latin1');
      if (!closed && responses.length < expect) return;
      settled = true;
      clearTimeout(timer);
      socket.destroy();
      resolve({ responses, incomplete: responses.length < expect, garbage, error });
    };
    const timer = setTimeout(() => {
      error = `no complete answer within ${timeoutMs} ms`;
      finish(true);
    }, timeoutMs);
    socket.on('connect', () => socket.write(requests.length === 1 ? requests[0] : Buffer.concat(requests)));
    socket.on('data', (d: Buffer) => {
      buf = buf.length === 0 ? d : Buffer.concat([buf, d]);
      finish(false);
    });
    socket.on('error', (e) => {
      error = e.message;
    });
    socket.on('close', () => finish(true));
  });
}
