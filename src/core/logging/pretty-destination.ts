import type { DestinationStream } from 'pino';

/**
 * Human-readable logs for development (NODE_ENV=development), in-process and synchronous. pino-pretty is a
 * development dependency: without it (a production install) the logs stay JSON.
 */
export async function prettyDestination(): Promise<DestinationStream | undefined> {
  try {
    const mod = (await import('pino-pretty')) as unknown as {
      default: (opts: Record<string, unknown>) => DestinationStream;
    };
    return mod.default({
      colorize: process.stdout.isTTY === true,
      sync: true,
      translateTime: 'SYS:HH:MM:ss.l',
    });
  } catch {
    process.stderr.write('atrium: pino-pretty is not installed; logging JSON lines\n');
    return undefined;
  }
}
