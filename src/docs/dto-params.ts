import { getMetadataStorage } from 'class-validator';
import type { ParamDoc } from '../core/ports/docs.port.js';

interface ConstraintMeta {
  type: string;
  name?: string;
  propertyName: string;
  constraints?: unknown[];
  each?: boolean;
  message?: unknown;
}

/**
 * Query parameters documented from a route's class-validator DTO, so the validation rules and the docs
 * cannot drift apart: allowed values (`@IsIn`), whole numbers and bounds (`@IsInt`, `@Min`, `@Max`),
 * booleans, dates (`@IsSpecDate`) and lists (`each`). Properties are optional unless nothing marks them so.
 */
export function dtoQueryParams(dto: new () => object): ParamDoc[] {
  const metas = getMetadataStorage().getTargetValidationMetadatas(dto, '', true, false) as ConstraintMeta[];
  const byProp = new Map<string, ConstraintMeta[]>();
  for (const m of metas) {
    const list = byProp.get(m.propertyName) ?? [];
    list.push(m);
    byProp.set(m.propertyName, list);
  }
  const out: ParamDoc[] = [];
  for (const [name, list] of byProp) {
    let type: ParamDoc['type'] = 'string';
    let values: string[] | undefined;
    let minimum: number | undefined;
    let maximum: number | undefined;
    let format: string | undefined;
    let list_ = false;
    let optional = false;
    let message: string | undefined;
    for (const m of list) {
      if (m.name === 'isOptional') optional = true;
      if (typeof m.message === 'string' && !message) message = m.message;
      if (m.each) list_ = true;
      switch (m.name) {
        case 'isInt':
          type = 'integer';
          break;
        case 'isNumber':
          type = 'number';
          break;
        case 'isBoolean':
          type = 'boolean';
          break;
        case 'min':
          minimum = Number(m.constraints?.[0]);
          break;
        case 'max':
          maximum = Number(m.constraints?.[0]);
          break;
        case 'isIn':
          values = (m.constraints?.[0] as unknown[]).map(String);
          break;
        case 'isSpecDate':
          format = 'date';
          break;
      }
    }
    out.push({
      name,
      type,
      enum: values,
      list: list_ || undefined,
      minimum,
      maximum,
      format,
      required: optional ? undefined : true,
      description: message ? sentence(message.replace('$property', name)) : undefined,
    });
  }
  return out;
}

function sentence(s: string): string {
  const t = s.charAt(0).toUpperCase() + s.slice(1);
  return /[.!?]$/.test(t) ? t : t + '.';
}
