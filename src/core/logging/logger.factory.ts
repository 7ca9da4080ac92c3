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
 * per-request line) costs one pass over its keys. pino's own wildcard `redact` costs 40–90 µs per line here,
 * more than the rest of the request's logging together.
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

const scrubbers = new WeakMap<object, { redactor?: SecretRedactor }>();

/**
 * The gateway's pino logger: JSON lines, level from LOG_LEVEL, every key field censored. String
 * messages (and the stacks Nest passes) are scrubbed of key positions and of every upstream secret the
 * SecretRedactor knows, once one is attached (see LoggingModule).
 */
export function createLogger(options: LoggerOptions): AtriumLogger {
  const state: { redactor?: SecretRedactor } = {};
  const scrub = (text: string): string => {
    const t = scrubKeyPositions(text);
    return state.redactor ? state.redactor.redact(t) : t;
  };
  const logger = pino(
    {
      level: options.level,
      formatters: { level: (label) => ({ level: label }), log: (obj) => censorKeys(obj) },
      hooks: {
        logMethod(args, method) {
          // Only string arguments: the per-request line is an object of bounded fields and skips this work.
          for (let i = 0; i < args.length; i++) {
            const a: unknown = args[i];
            if (typeof a === 'string') args[i] = scrub(a);
          }
          return method.apply(this, args);
        },
      },
    },
    options.destination ?? defaultLogDestination(),
  );
  scrubbers.set(logger, state);
  return logger;
}

/** Lets the logger scrub the upstream secrets (registered as upstream modules initialise). */
export function attachSecretRedactor(logger: AtriumLogger, redactor: SecretRedactor): void {
  const state = scrubbers.get(logger);
  if (state) state.redactor = redactor;
}

/** The scrubbing applied to string messages, for callers that log pre-formatted text (stacks). */
export function scrubWith(logger: AtriumLogger, text: string): string {
  const t = scrubKeyPositions(text);
  const r = scrubbers.get(logger)?.redactor;
  return r ? r.redact(t) : t;
}
