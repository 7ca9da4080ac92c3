/**
 * The docs port. Documentation of upstream operations, kept beside each upstream's route table (the tables stay the single
 * source of the routes; these only annotate them by route id). Everything is optional: an operation without
 * docs is still documented from its route (method, path, path parameters, query DTO, TTL, side effects).
 */

export interface ParamDoc {
  readonly name: string;
  readonly description?: string;
  readonly type?: 'string' | 'integer' | 'number' | 'boolean';
  /** Allowed values. */
  readonly enum?: readonly string[];
  /** A list: repeated (`k=a&k=b`) or comma-separated (`k=a,b`). */
  readonly list?: boolean;
  /** `date`, `date-time` or a vendor format name, for display. */
  readonly format?: string;
  readonly minimum?: number;
  readonly maximum?: number;
  readonly default?: string | number | boolean;
  readonly example?: string | number | boolean;
  readonly required?: boolean;
}

/** A JSON Schema object as OpenAPI 3.0 uses it (only what the docs need). */
export interface SchemaDoc {
  readonly type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  readonly description?: string;
  readonly properties?: Readonly<Record<string, SchemaDoc>>;
  readonly required?: readonly string[];
  readonly items?: SchemaDoc;
  readonly enum?: readonly (string | number)[];
  readonly format?: string;
  readonly nullable?: boolean;
  readonly additionalProperties?: boolean | SchemaDoc;
  /** `#/components/schemas/<Name>` */
  readonly $ref?: string;
  readonly example?: unknown;
}

export interface ResponseDoc {
  readonly description?: string;
  /** Name under which `schema` is published in `components.schemas` (and typed in the generated client). */
  readonly name?: string;
  readonly schema?: SchemaDoc;
  readonly example?: unknown;
}

export interface BodyDoc {
  readonly description?: string;
  /** Content types the upstream takes; the body is forwarded as sent. */
  readonly contentTypes: readonly string[];
  readonly fields?: readonly ParamDoc[];
  readonly example?: Readonly<Record<string, unknown>>;
}

export interface RouteDocs {
  readonly summary?: string;
  readonly description?: string;
  /** Query parameters beyond the table's common ones and the route's DTO. */
  readonly query?: readonly ParamDoc[];
  /** Descriptions (and examples) of path parameters, by name. */
  readonly pathParams?: Readonly<
    Record<string, { readonly description?: string; readonly example?: string }>
  >;
  readonly body?: BodyDoc;
  readonly response?: ResponseDoc;
}

/** Docs of one upstream's operations, keyed by route id (the compiler checks the ids against the table). */
export interface UpstreamDocs<RouteId extends string = string> {
  /** One paragraph for the upstream's tag. */
  readonly description?: string;
  /** Query parameters every operation of this upstream accepts (e.g. `lang`, `format`). */
  readonly common?: readonly ParamDoc[];
  /** Default descriptions of path parameters, by name. */
  readonly pathParams?: Readonly<
    Record<string, { readonly description?: string; readonly example?: string }>
  >;
  readonly routes?: Partial<Readonly<Record<RouteId, RouteDocs>>>;
}

/**
 * Metadata key on every generated upstream handler (proxy/upstream-controller.factory.ts): what the docs
 * module needs to document it. The docs module pulls it when it builds the OpenAPI document; the proxy
 * never calls the docs.
 */
export const ROUTE_DOCS = Symbol('RouteDocs');

/** The value stored under ROUTE_DOCS (`Route`: the proxy's RouteDefinition). */
export interface RouteDocsMeta<Route = unknown> {
  readonly upstream: string;
  readonly prefixes: readonly string[];
  readonly route: Route;
  readonly docs?: UpstreamDocs;
}
