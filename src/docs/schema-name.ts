import type { SchemaDoc } from '../core/ports/docs.port.js';

/** Marks an inline schema to be published under `components.schemas` (see openapi.document.ts). */
export const SCHEMA_NAME_MARKER = 'x-atrium-schema-name';

/** A schema published under `components.schemas.<name>` (and typed by that name in the generated client). */
export function namedSchema(name: string, schema: SchemaDoc): SchemaDoc {
  return { ...schema, [SCHEMA_NAME_MARKER]: name } as SchemaDoc;
}
