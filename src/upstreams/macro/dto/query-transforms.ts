import { Transform } from 'class-transformer';
import { registerDecorator, type ValidationOptions } from 'class-validator';

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
 * `@IsInt`, because the vendor may read them differently from how `Number()` does (issue 12).
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

const DATE = /^(\d{4})-?(\d{2})-?(\d{2})$/;
const DATETIME = /^(\d{4})-(\d{2})-(\d{2})[T ](\d{2}):(\d{2})(:(\d{2})(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})?$/;

function realDate(y: number, m: number, d: number): boolean {
  const dt = new Date(Date.UTC(y, m - 1, d));
  return dt.getUTCFullYear() === y && dt.getUTCMonth() === m - 1 && dt.getUTCDate() === d;
}

/** `YYYY-MM-DD`, `YYYYMMDD` or an ISO datetime (the Python client sends `2020-01-01T12:00:00`). */
export function isSpecDate(value: unknown): boolean {
  if (typeof value !== 'string') return false;
  const d = DATE.exec(value);
  if (d) {
    // Mixed forms like 2024-0101 are not dates.
    if (value.length !== 8 && value.length !== 10) return false;
    return realDate(Number(d[1]), Number(d[2]), Number(d[3]));
  }
  const t = DATETIME.exec(value);
  if (!t) return false;
  return realDate(Number(t[1]), Number(t[2]), Number(t[3])) && Number(t[4]) < 24 && Number(t[5]) < 60;
}

export function IsSpecDate(options?: ValidationOptions): PropertyDecorator {
  return (target: object, propertyName: string | symbol) =>
    registerDecorator({
      name: 'isSpecDate',
      target: target.constructor,
      propertyName: String(propertyName),
      options: { message: '$property must be a date: YYYY-MM-DD, YYYYMMDD or an ISO datetime', ...options },
      validator: { validate: isSpecDate },
    });
}
