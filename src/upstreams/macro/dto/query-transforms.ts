import { Transform } from 'class-transformer';
import { registerDecorator, type ValidationArguments, type ValidationOptions } from 'class-validator';
import { canonicalDate, notADate } from '../../../proxy/canonical-request.js';

/** `true`/`false` in any case (the Python client sends `True`), and `1`/`0` (PHP clients). */
export const ToBoolean = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) => {
    if (typeof value !== 'string') return value;
    const v = value.trim().toLowerCase();
    if (v === 'true' || v === '1') return true;
    if (v === 'false' || v === '0') return false;
    return value;
  });

/**
 * A whole number written plainly (`5`, `-1`): `+5`, `1e2`, `1.0`, ` 5` or `0x10` stay strings and fail
 * `@IsInt`, because the vendor may read them differently from how `Number()` does.
 */
export const ToStrictInt = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' && /^-?\d+$/.test(value) && value.replace(/^-?0*/, '').length <= 15
      ? Number(value)
      : value,
  );

/** A text value trimmed: a whitespace-only value is empty, as it is everywhere else. */
export const ToTrimmed = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) => (typeof value === 'string' ? value.trim() : value));

/**
 * A whole number of 16 or more digits is refused as such (the gateway's cap: beyond it a number is no longer
 * exact in every reader), not as "not a whole number". Declared nearest the property, so its message is
 * the one reported.
 */
export function HasAtMostDigits(digits: number, options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'hasAtMostDigits',
      target: target.constructor,
      propertyName: String(propertyName),
      constraints: [digits],
      options: { message: `$property must have at most ${digits} digits`, ...options },
      validator: {
        validate: (value: unknown) =>
          typeof value !== 'string' || !/^-?\d+$/.test(value) || value.replace(/^-?0*/, '').length <= digits,
      },
    });
}

/** One rule for `lang` and `format`: any case, and an empty value is the same as none. */
export const ToLowerOrAbsent = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) =>
    typeof value === 'string' ? (value.trim() === '' ? undefined : value.trim().toLowerCase()) : value,
  );

/** `status=ACTIVE,DELETED`, `status=ACTIVE&status=DELETED` and `status[0]=ACTIVE` all give a list. */
export const ToList = (): PropertyDecorator =>
  Transform(({ value }: { value: unknown }) => {
    const items: unknown[] = Array.isArray(value) ? (value as unknown[]) : [value];
    return items.flatMap((v): unknown[] => (typeof v === 'string' ? v.split(',').map((s) => s.trim()) : [v]));
  });

/**
 * A list with an empty item (`status=ACTIVE,`, `status=ACTIVE,%20`) is refused as such, not as a value
 * outside the list. Declared nearest the property, so its message is the one reported.
 */
export function HasNoEmptyItems(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'hasNoEmptyItems',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: '$property must not have empty items', ...options },
      validator: { validate: (value: unknown) => !Array.isArray(value) || !value.includes('') },
    });
}

/**
 * `YYYY-MM-DD`, `YYYYMMDD` or an ISO datetime (the Python client sends `2020-01-01T12:00:00`): the forms
 * the canonical request sends, by the same reading.
 */
export function isSpecDate(value: unknown): boolean {
  return typeof value === 'string' && canonicalDate(value.trim()) !== undefined;
}

/** What is wrong with a date parameter: given twice, empty, or not one of the forms. */
function dateMessage({ property, value }: ValidationArguments): string {
  if (typeof value !== 'string') return `${property} must be given once`;
  const v = value.trim();
  return v === '' ? `${property} must not be empty` : notADate(property, v);
}

export function IsSpecDate(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isSpecDate',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: dateMessage, ...options },
      validator: { validate: isSpecDate },
    });
}
