import type { LoggerService } from '@nestjs/common';
import type { Level } from 'pino';
import { scrubLogText, type AtriumLogger } from './logger.factory.js';

const STACK = /^.*\n\s+at .+/s;

/**
 * Nest's boot lines (a line per module, controller and route: about 200): debug, so what an operator reads
 * at info is the gateway's own few lines.
 */
const BOOT_CHATTER = new Set([
  'InstanceLoader',
  'RoutesResolver',
  'RouterExplorer',
  'NestFactory',
  'NestApplication',
]);

/**
 * Nest's logger, backed by the gateway's pino logger: every framework and module message becomes one JSON
 * line at the matching level (`log` → info, `verbose` → trace), with its context, scrubbed like the rest.
 * Passed to NestFactory.create in main.ts, so boot errors are printed as well.
 */
export class PinoNestLogger implements LoggerService {
  constructor(private readonly logger: AtriumLogger) {}

  log(message: unknown, ...params: unknown[]): void {
    const context = params[params.length - 1];
    this.write(typeof context === 'string' && BOOT_CHATTER.has(context) ? 'debug' : 'info', message, params);
  }
  error(message: unknown, ...params: unknown[]): void {
    this.write('error', message, params, true);
  }
  warn(message: unknown, ...params: unknown[]): void {
    this.write('warn', message, params);
  }
  debug(message: unknown, ...params: unknown[]): void {
    this.write('debug', message, params);
  }
  verbose(message: unknown, ...params: unknown[]): void {
    this.write('trace', message, params);
  }
  fatal(message: unknown, ...params: unknown[]): void {
    this.write('fatal', message, params, true);
  }

  private write(level: Level, message: unknown, params: unknown[], mayHaveStack = false): void {
    if (!this.logger.isLevelEnabled(level)) return;
    // Nest's conventions: the last string parameter is the context; error() may put a stack before it.
    let context: string | undefined;
    let stack: string | undefined;
    const rest = [...params];
    if (rest.length > 0 && typeof rest[rest.length - 1] === 'string') {
      const last = rest[rest.length - 1] as string;
      if (mayHaveStack && rest.length === 1 && STACK.test(last)) stack = last;
      else context = last;
      rest.pop();
    }
    if (mayHaveStack && stack === undefined && typeof rest[0] === 'string') stack = rest.shift() as string;
    const fields: Record<string, unknown> = {};
    if (context) fields.context = context;
    if (stack) fields.stack = scrubLogText(stack);
    let msg: string;
    if (message instanceof Error) {
      msg = message.message;
      if (!fields.stack && message.stack) fields.stack = scrubLogText(message.stack);
      fields.errorName = message.name;
    } else if (typeof message === 'object' && message !== null) {
      const { message: inner, ...other } = message as { message?: unknown };
      Object.assign(fields, other);
      msg = typeof inner === 'string' ? inner : '';
    } else msg = String(message);
    this.logger[level](fields, msg);
  }
}
