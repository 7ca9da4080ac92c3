// The types a fake upstream and its vendor subclasses share: recorded requests, what a handler sees,
// and the constructor options.
import type { IncomingHttpHeaders } from 'node:http';
import type { FakeReply } from './fake-reply.js';

export interface RecordedRequest {
  method: string;
  /** Raw path and query exactly as received. */
  url: string;
  /** Raw path without the query. */
  path: string;
  /** Decoded query pairs in order ('+' decodes to a space). */
  query: Array<[string, string]>;
  headers: IncomingHttpHeaders;
  body: Buffer;
  at: number;
}

/** What a vendor handler sees. */
export interface FakeRequest {
  method: string;
  /** Raw path below the base path (still percent-encoded), e.g. `/series/1%2C2/data`. */
  path: string;
  query: URLSearchParams;
  headers: IncomingHttpHeaders;
  body: Buffer;
  recorded: RecordedRequest;
}

export type AuthResult = { credential: string } | { reply: FakeReply };

export type FakeHandler = (req: FakeRequest, credential: string) => FakeReply | Promise<FakeReply>;

export interface FakeUpstreamOptions {
  kind: string;
  /** Prefix of every vendor path, e.g. `/v2`; control endpoints stay at `/__fake/`. */
  basePath?: string;
  /** Answers requests when no subclass overrides handle(). */
  handler?: FakeHandler;
  /** Clock used for rate-limit windows and sessions; injectable for tests. */
  now?: () => number;
  /** Long EMIS query strings need more than Node's 16 KiB default. */
  maxHeaderSize?: number;
  /**
   * `requests` keeps at least this many of the latest requests (default 10 000), so a long benchmark
   * does not grow the fake without bound; calls() still counts every request.
   */
  recordLimit?: number;
}
