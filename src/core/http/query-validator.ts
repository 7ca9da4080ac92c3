import type { ValidationError } from '@nestjs/common';
import { plainToInstance } from 'class-transformer';
import { validateSync } from 'class-validator';
import { GatewayError } from '../errors/gateway-error.js';

/** The first failed constraint as the one 400 envelope. */
export function validationError(errors: ValidationError[]): GatewayError {
  const first = errors[0];
  const messages = first?.constraints ? Object.values(first.constraints) : [];
  const parameter = first?.property ?? 'query';
  return new GatewayError('VALIDATION_FAILED', {
    parameter,
    message: messages[0]
      ? `Invalid parameter "${parameter}": ${messages[0]}.`
      : `Invalid parameter "${parameter}".`,
  });
}

/** The class-validator options every query check uses. */
export const VALIDATOR_OPTIONS = {
  whitelist: false,
  forbidUnknownValues: false,
  validationError: { target: false, value: false },
} as const;

export type QueryValidator = (query: unknown) => void;

/**
 * A query DTO's check, built once per route (QueryValidationPipe keeps it): class-transformer, then
 * class-validator's synchronous rules (the DTOs have no asynchronous ones). Throws the 400 envelope's error
 * on the first failure.
 */
export function compileQueryValidator(dto: new () => object): QueryValidator {
  return (query) => {
    const plain = withoutProtoKeys(query === undefined || query === null ? {} : query);
    const entity: object = plainToInstance(dto, plain);
    const errors = validateSync(entity, VALIDATOR_OPTIONS);
    if (errors.length > 0) throw validationError(errors);
  };
}

/** `__proto__` and `constructor` keys never reach class-transformer (as Nest's ValidationPipe strips them). */
function withoutProtoKeys(query: unknown): unknown {
  const q = query as Record<string, unknown>;
  if (
    !Object.prototype.hasOwnProperty.call(q, '__proto__') &&
    !Object.prototype.hasOwnProperty.call(q, 'constructor')
  )
    return q;
  const out: Record<string, unknown> = {};
  for (const k of Object.keys(q)) if (k !== '__proto__' && k !== 'constructor') out[k] = q[k];
  return out;
}
