import { pino, type DestinationStream, type Logger } from 'pino';
import { defaultLogDestination } from './log-destination.js';
import { scrubKeyPositions } from './key-scrub.js';
import type { SecretRedactor } from './secret-redactor.js';

export type AtriumLogger = Logger;

/** Field names that hold a key wherever they appear in a logged object (compared in lower case). */
export const KEY_FIELDS: ReadonlySet<string> = new Set([
  'authorization',
  'proxy-authorization',
  'x-api-key',
  'cookie',
  'set-cookie',
  'token',
  'sessionid',
  'session_id',
  'password',
  'passwd',
  'apikey',
  'api_key',
  'access_token',
  'secret',
]);

const CENSOR = '[REDACTED]';
const MAX_DEPTH = 4;

function isPlain(v: unknown): v is Record<string, unknown> {
  if (typeof v !== 'object' || v === null) return false;
  const proto = Object.getPrototypeOf(v) as unknown;
  return proto === Object.prototype || proto === null;
}

/**
 * Censors every key field of a logged object, a few levels deep (headers, query objects, error details).
 * Returns the object itself when there is nothing to censor, so a flat line of bounded fields (the
 * per-request line) costs one pass over its keys. Key custody, hand-written: pino's `redact` matches fixed,
 * case-sensitive paths, and a key field must be found under any parent, in any case.
 */
export function censorKeys<T>(value: T, depth = 0): T {
  if (Array.isArray(value)) {
    if (depth >= MAX_DEPTH) return value;
    let out: unknown[] | undefined;
    value.forEach((v, i) => {
      const c = censorKeys(v as unknown, depth + 1);
      if (c !== v) (out ??= [...(value as unknown[])])[i] = c;
    });
    return (out ?? value) as T;
  }
  if (!isPlain(value) || depth >= MAX_DEPTH) return value;
  let out: Record<string, unknown> | undefined;
  for (const k in value) {
    const v = value[k];
    let c: unknown = v;
    if (KEY_FIELDS.has(k) || KEY_FIELDS.has(k.toLowerCase())) c = v === undefined || v === null ? v : CENSOR;
    else if (typeof v === 'object' && v !== null) c = censorKeys(v, depth + 1);
    if (c !== v) (out ??= { ...value })[k] = c;
  }
  return (out ?? value) as T;
}

export interface LoggerOptions {
  /** `fatal` … `trace`, or `silent`. */
  readonly level: string;
  readonly destination?: DestinationStream;
}

/**
 * The SecretRedactors of the live gateway apps of this process (one in production). Process-wide because
 * Nest's static Logger sends every module's messages to the logger of the app created last: with several
 * apps in one process (tests), a message of one may be written by another's logger.
 */
const liveRedactors = new Set<SecretRedactor>();

function scrubText(text: string): string {
  let t = scrubKeyPositions(text);
  for (const r of liveRedactors) t = r.redact(t);
  return t;
}

/**
 * The gateway's pino logger: JSON lines, level from LOG_LEVEL, every key field censored. String
 * messages (and the stacks Nest passes) are scrubbed of key positions and of every upstream secret the
 * registered SecretRedactors know (see LoggingModule).
 */
export function createLogger(options: LoggerOptions): AtriumLogger {
  return pino(
    {
      level: options.level,
      formatters: { level: (label) => ({ level: label }), log: (obj) => censorKeys(obj) },
      hooks: {
        logMethod(args, method) {
          // Only string arguments: the per-request line is an object of bounded fields and skips this work.
          for (let i = 0; i < args.length; i++) {
            const a: unknown = args[i];
            if (typeof a === 'string') args[i] = scrubText(a);
          }
          return method.apply(this, args);
        },
      },
    },
    options.destination ?? defaultLogDestination(),
  );
}

/** Every logger scrubs the secrets this redactor holds (the upstream keys, registered as modules start). */
export function registerLogRedactor(redactor: SecretRedactor): void {
  liveRedactors.add(redactor);
}

export function unregisterLogRedactor(redactor: SecretRedactor): void {
  liveRedactors.delete(redactor);
}

/** The scrubbing applied to string messages, for callers that log pre-formatted text (stacks). */
export function scrubLogText(text: string): string {
  return scrubText(text);
}
