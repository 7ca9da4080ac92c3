import { randomBytes } from 'node:crypto';
import type { ErrorCode } from '../../core/errors/error-codes.js';
import { GatewayError } from '../../core/errors/gateway-error.js';

/** An upstream 404 remembered for a short time (negative caching). */
export interface NegativeInfo {
  readonly code: ErrorCode;
  readonly message: string;
  readonly upstream?: string;
  readonly upstreamStatus?: number;
  readonly upstreamCode?: string | number;
}

/**
 * One stored answer: what the client got on the miss, so a hit is byte-identical, plus the times that make
 * `Age` and the stale windows right.
 */
export interface CacheEntry {
  /** Distinguishes successive stores of one key (a waiter knows a fresh result from the one it saw). */
  readonly id: string;
  readonly status: number;
  /** The client headers of the miss (content type and the few others the transport passes). */
  readonly headers: Readonly<Record<string, string>>;
  readonly body: Buffer;
  /** Epoch ms of the store (`Age`). */
  readonly storedAt: number;
  /** Epoch ms until which the entry is fresh. */
  readonly freshUntil: number;
  /** Set for a remembered 404: a hit re-raises this error. */
  readonly negative?: NegativeInfo;
}

let idCounter = 0;
const idPrefix = randomBytes(4).toString('hex');

export function newEntryId(): string {
  idCounter = (idCounter + 1) % 0x7fffffff;
  return idPrefix + idCounter.toString(36);
}

/** Bytes an entry holds in memory, for the byte-bounded LRU (body plus a fixed allowance for the rest). */
export function entryBytes(e: CacheEntry): number {
  let n = e.body.length + 256;
  for (const k in e.headers) n += (k.length + e.headers[k].length) * 2;
  return n;
}

export function negativeError(info: NegativeInfo): GatewayError {
  // A cached refusal is served at hit rate: no stack.
  return GatewayError.expected(info.code, {
    message: info.message,
    upstream: info.upstream,
    upstreamStatus: info.upstreamStatus,
    upstreamCode: info.upstreamCode,
    fromUpstream: true,
  });
}

const MAGIC = 'A1';

/**
 * Redis form of an entry: a few text lines, then the body in base64 (binary-safe through a UTF-8 client).
 * No JSON: a hit reads a handful of short lines and decodes the body once.
 *
 *   A1\n<id>\n<status>\n<storedAt>\n<freshUntil>\n<headerCount>\n(<name>\t<value>\n)*<negative JSON or empty>\n<base64>
 */
export function encodeEntry(e: CacheEntry): string {
  let out = `${MAGIC}\n${e.id}\n${e.status}\n${e.storedAt}\n${e.freshUntil}\n`;
  const names = Object.keys(e.headers);
  out += names.length + '\n';
  for (const k of names) out += k + '\t' + e.headers[k].replace(/[\r\n]/g, ' ') + '\n';
  out += (e.negative ? JSON.stringify(e.negative) : '') + '\n';
  return out + e.body.toString('base64');
}

/** Parses `encodeEntry` output; undefined for anything else (a foreign or corrupt value is a miss). */
export function decodeEntry(s: string): CacheEntry | undefined {
  let pos = 0;
  const line = (): string | undefined => {
    const nl = s.indexOf('\n', pos);
    if (nl === -1) return undefined;
    const l = s.slice(pos, nl);
    pos = nl + 1;
    return l;
  };
  if (line() !== MAGIC) return undefined;
  const id = line();
  const status = Number(line());
  const storedAt = Number(line());
  const freshUntil = Number(line());
  const count = Number(line());
  if (id === undefined || !(status > 0) || !(storedAt > 0) || !(freshUntil > 0) || !(count >= 0))
    return undefined;
  const headers: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    const l = line();
    if (l === undefined) return undefined;
    const tab = l.indexOf('\t');
    if (tab <= 0) return undefined;
    headers[l.slice(0, tab)] = l.slice(tab + 1);
  }
  const neg = line();
  if (neg === undefined) return undefined;
  let negative: NegativeInfo | undefined;
  if (neg) {
    try {
      negative = JSON.parse(neg) as NegativeInfo;
    } catch {
      return undefined;
    }
  }
  return { id, status, headers, body: Buffer.from(s.slice(pos), 'base64'), storedAt, freshUntil, negative };
}
