import { Injectable, type ArgumentMetadata, type PipeTransform } from '@nestjs/common';
import { compileQueryValidator, type QueryValidator } from './query-validator.js';

/** Parameter types that are not a query DTO (Nest's own list of what it never validates). */
const NOT_A_DTO: readonly unknown[] = [String, Boolean, Number, Array, Object, Buffer, Date];

/**
 * The one check of a route's query parameters: a route's query DTO is compiled once (query-validator.ts),
 * and the same compiled check serves a direct request (this pipe, global) and an inner call of a batch or a
 * view (RouteCaller asks `validatorFor`). The request's query reaches the handler as it came.
 */
@Injectable()
export class QueryValidationPipe implements PipeTransform {
  private readonly compiled = new Map<new () => object, QueryValidator>();

  /** The compiled check of a query DTO (built on first use, then kept). */
  validatorFor(dto: new () => object): QueryValidator {
    let check = this.compiled.get(dto);
    if (!check) this.compiled.set(dto, (check = compileQueryValidator(dto)));
    return check;
  }

  transform(value: unknown, { type, metatype }: ArgumentMetadata): unknown {
    if (type === 'query' && typeof metatype === 'function' && !NOT_A_DTO.includes(metatype))
      this.validatorFor(metatype as new () => object)(value);
    return value;
  }
}
