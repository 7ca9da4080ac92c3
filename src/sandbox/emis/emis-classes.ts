// The `_type` class names the EMIS PHP client ships (design notes, upstreams.md §6.3). The client
// instantiates whatever `_type` names, so a fake that invents a name ends the caller in a PHP fatal
// error: answers without a fitting class carry no `_type` (the client then returns the raw `data`).
// test/fixtures/emis-php-client-classes.json holds the same list for the contract tests.

const NS = 'Emis\\Entity\\Api\\';

export const EMIS_CLASSES = {
  company: `${NS}Dictionary\\Company`,
  country: `${NS}Dictionary\\Country`,
  industry: `${NS}Dictionary\\Industry`,
  language: `${NS}Dictionary\\Language`,
  publication: `${NS}Dictionary\\Publication`,
  publicationType: `${NS}Dictionary\\PublicationType`,
  sourceType: `${NS}Dictionary\\SourceType`,
  topic: `${NS}Dictionary\\Topic`,
  document: `${NS}Document\\Document`,
  documentSearch: `${NS}Document\\DocumentSearch`,
  file: `${NS}Document\\File`,
  result: `${NS}Document\\Result`,
  search: `${NS}Document\\Search`,
  usageDocument: `${NS}UsageReport\\Document`,
  usageRequest: `${NS}UsageReport\\Request`,
} as const satisfies Record<string, string>;

export type EmisClass = keyof typeof EMIS_CLASSES;

/** The entity tagged with the client's class name, `_type` first as the vendor writes it. */
export function typed<T extends object>(cls: EmisClass, entity: T): { _type: string } & T {
  return { _type: EMIS_CLASSES[cls], ...entity };
}
