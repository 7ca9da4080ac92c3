import { pino, type DestinationStream, type Logger } from 'pino';
import { defaultLogDestination } from './log-destination.js';
import { scrubKeyPositions } from './key-scrub.js';
import type { SecretRedactor } from './secret-redactor.js';

export type AtriumLogger = Logger;

/**
 * Structured fields that can hold a key, at any of the first three levels of a logged object (request
 * headers, query objects, config dumps, error details). Censored before serialisation.
 */
const KEY_FIELDS = [
  'authorization',
  '["proxy-authorization"]',
  '["x-api-key"]',
  'cookie',
  '["set-cookie"]',
  'token',
  'sessionId',
  'password',
  'apiKey',
  'access_token',
  'secret',
];
export const REDACT_PATHS: readonly string[] = KEY_FIELDS.flatMap((f) => {
  const tail = f.startsWith('[') ? f : `.${f}`;
  return [f, `*${tail}`, `*.*${tail}`];
});

export interface LoggerOptions {
  /** `fatal` … `trace`, or `silent`. */
  readonly level: string;
  readonly destination?: DestinationStream;
}

const scrubbers = new WeakMap<object, { redactor?: SecretRedactor }>();

/**
 * The gateway's pino logger: JSON lines, level from LOG_LEVEL, every key position censored. String
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
      redact: { paths: [...REDACT_PATHS], censor: '[REDACTED]' },
      formatters: { level: (label) => ({ level: label }) },
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
