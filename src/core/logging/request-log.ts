import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import { pino, type DestinationStream } from 'pino';
import { ATRIUM_LOGGER } from './logging.tokens.js';
import type { AtriumLogger } from './logger.factory.js';

/** The one line written per request. Every field is bounded and key-free by construction. */
export interface RequestLogRecord {
  reqId: string;
  method: string;
  /** The path without its query string (the query is where `token` and `sessionId` travel). */
  path: string;
  /** Route id of a gateway operation (`macro.feeds.list`); absent for the gateway's own endpoints. */
  route?: string;
  upstream?: string;
  consumer?: string;
  status: number;
  /** `X-Cache` of the answer: HIT, MISS, STALE, COALESCED, BYPASS. */
  cache?: string;
  /** Time spent waiting on the upstream (all attempts); absent when no upstream call was made. */
  upstreamMs?: number;
  /** Total time in the gateway, from the first byte of the request to the last of the answer. */
  ms: number;
  /** The client's address (`X-Forwarded-For` only from ATRIUM_TRUSTED_PROXIES). */
  client?: string;
  /** W3C trace id of the request (the consumer's `traceparent`, or one the gateway started). */
  traceId?: string;
}

/** A client's request logs at info; the inner calls of a batch or a view at debug. */
export type RequestLogLevel = 'info' | 'debug';

/** pino's marker for destinations (multistream) that read the level of each line from the logger. */
const NEEDS_METADATA = Symbol.for('pino.metadata');

interface LineParts {
  readonly stream: DestinationStream;
  /** The destination gathers lines itself (fd-destination.ts): each line is handed over as it is built. */
  readonly gathers: boolean;
  /** `,"time":…` as the logger writes it. */
  readonly time: () => string;
  /** `,"pid":…,"hostname":"…"` and any other base bindings, already serialised. */
  readonly bindings: string;
}

/**
 * Writes the per-request line with fixed fields, as one string straight to the logger's destination: no
 * object for pino to serialise, no key-censoring walk (`censorKeys` stays for free-form lines). Safe by
 * construction: every field is a number or a bounded name, except `reqId` and `path`, which are escaped as
 * JSON strings (`path` has no query and was scrubbed of known secrets by the caller). The line has the
 * shape pino gives it (level label, time, pid, hostname, msg), so readers see no difference.
 *
 * Stdout's destination (fd-destination.ts) copies each line into its buffer and writes within 50 ms: lines
 * are handed to it as they are built. Other destinations (pino's, the sandbox's synchronous one, the test
 * capture) get the lines once per event-loop turn, joined: pino's destination measures its pending buffer
 * on every write, which under load made each line cost as much as the rest of a cache hit. There a line
 * reaches the destination at most one turn later (`flush()` hands over what is pending at once).
 */
@Injectable()
export class RequestLogger implements OnApplicationShutdown {
  private readonly parts: LineParts | undefined;
  private pending: string[] = [];
  private scheduled = false;
  /** Hands the pending lines to the destination (scheduled with setImmediate when the first one arrives). */
  readonly flush = (): void => {
    this.scheduled = false;
    const lines = this.pending;
    if (lines.length === 0) return;
    this.pending = [];
    this.parts!.stream.write(lines.length === 1 ? lines[0] : lines.join(''));
  };

  constructor(@Inject(ATRIUM_LOGGER) private readonly logger: AtriumLogger) {
    const l = logger as unknown as Record<symbol, unknown>;
    const stream = l[pino.symbols.streamSym] as
      (DestinationStream & Record<symbol, unknown> & { gathers?: boolean }) | undefined;
    const time = l[pino.symbols.timeSym];
    const bindings = l[pino.symbols.chindingsSym];
    // Anything unusual (a multistream, a custom time function's shape unknown): let pino write the line.
    this.parts =
      stream && stream[NEEDS_METADATA] !== true && typeof time === 'function' && typeof bindings === 'string'
        ? { stream, gathers: stream.gathers === true, time: time as () => string, bindings }
        : undefined;
  }

  /** The last lines reach the destination before the logger is flushed (main.ts, after app.close()). */
  onApplicationShutdown(): void {
    this.flush();
  }

  get enabled(): boolean {
    return this.logger.isLevelEnabled('info');
  }

  /** Whether lines of `level` are written (inner calls of a batch or view log at debug). */
  enabledAt(level: RequestLogLevel): boolean {
    return this.logger.isLevelEnabled(level);
  }

  write(record: RequestLogRecord, level: RequestLogLevel = 'info'): void {
    const p = this.parts;
    if (!p) {
      this.logger[level](record, 'request');
      return;
    }
    let line = (level === 'info' ? '{"level":"info"' : '{"level":"debug"') + p.time() + p.bindings;
    line += ',"reqId":' + str(record.reqId);
    line += ',"method":' + str(record.method);
    line += ',"path":' + str(record.path);
    if (record.route !== undefined) line += ',"route":' + str(record.route);
    if (record.upstream !== undefined) line += ',"upstream":' + str(record.upstream);
    if (record.consumer !== undefined) line += ',"consumer":' + str(record.consumer);
    line += ',"status":' + record.status;
    if (record.cache !== undefined) line += ',"cache":' + str(record.cache);
    if (record.upstreamMs !== undefined) line += ',"upstreamMs":' + finite(record.upstreamMs);
    line += ',"ms":' + finite(record.ms);
    // From X-Forwarded-For when a trusted proxy sent it: escaped like any client-controlled text.
    if (record.client !== undefined) line += ',"client":' + str(record.client);
    if (record.traceId !== undefined) line += ',"traceId":"' + record.traceId + '"';
    line += ',"msg":"request"}\n';
    if (p.gathers) {
      p.stream.write(line);
      return;
    }
    this.pending.push(line);
    if (!this.scheduled) {
      this.scheduled = true;
      setImmediate(this.flush);
    }
  }
}

/** Printable ASCII without `"` or `\\`: a JSON string as it stands. */
const PLAIN = /^[\x20\x21\x23-\x5b\x5d-\x7e]*$/;

/** A JSON string: quoted as is when nothing needs escaping (ids, routes, paths), else JSON.stringify. */
function str(s: string): string {
  return PLAIN.test(s) ? '"' + s + '"' : JSON.stringify(s);
}

function finite(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}
