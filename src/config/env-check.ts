import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationError } from 'class-validator';

export class ConfigError extends Error {}

/** The process environment, or a test's stand-in for it. */
export type Env = Record<string, string | undefined>;

/**
 * Validates one group of variables against its class. Throws a ConfigError naming the bad variables
 * (`nameOf` turns a property into the variable's full name), never their values: a value may be a secret.
 */
export function check<T extends object>(
  cls: new () => T,
  raw: Record<string, unknown>,
  nameOf: (p: string) => string,
): T {
  // Empty strings mean "unset", as in most deployment tools.
  const cleaned = Object.fromEntries(Object.entries(raw).filter(([, v]) => v !== undefined && v !== ''));
  const value = plainToInstance(cls, cleaned);
  const errors = validateSync(value, { whitelist: false, skipMissingProperties: false });
  if (errors.length)
    throw new ConfigError(
      'Invalid configuration: ' + errors.map((e) => `${nameOf(e.property)} (${rulesOf(e)})`).join(', '),
    );
  return value;
}

/** What a rejected value broke, in class-validator's words without the field name: `must be an integer number`. */
function rulesOf(e: ValidationError): string {
  return Object.values(e.constraints ?? {})
    .map((m) => m.replace(new RegExp(`^${e.property} `), ''))
    .join('; ');
}

/** The problem list of a failed check, without its `Invalid configuration: ` lead (loadConfig joins them). */
export function problemsOf(e: unknown): string {
  return (e as Error).message.replace('Invalid configuration: ', '');
}
