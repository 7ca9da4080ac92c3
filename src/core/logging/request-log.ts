import { Inject, Injectable } from '@nestjs/common';
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

/**
 * Writes the per-request line through the gateway's pino logger: `{level, time, pid, hostname, …record,
 * msg: "request"}`, absent fields left out. `path` has no query and was scrubbed of known secrets by the
 * caller; the other fields are ids, numbers and labels.
 */
@Injectable()
export class RequestLogger {
  private readonly logger: AtriumLogger;

  constructor(@Inject(ATRIUM_LOGGER) logger: AtriumLogger) {
    // A child logger of the gateway's: its level and destination. The line's field names are fixed (above)
    // and none is a key field, so the parent's key-field censoring has nothing to find in it; and its message
    // travels in the record, so no string argument goes through the message scrubbing.
    this.logger = logger.child({}, { formatters: { log: (record) => record } });
  }

  get enabled(): boolean {
    return this.logger.isLevelEnabled('info');
  }

  /** Whether lines of `level` are written (inner calls of a batch or view log at debug). */
  enabledAt(level: RequestLogLevel): boolean {
    return this.logger.isLevelEnabled(level);
  }

  write(record: RequestLogRecord, level: RequestLogLevel = 'info'): void {
    this.logger[level]({ ...record, msg: 'request' });
  }
}
