import {
  ApiBody,
  ApiConsumes,
  ApiExtension,
  ApiOperation,
  ApiParam,
  ApiProduces,
  ApiQuery,
  ApiResponse,
  ApiTags,
} from '@nestjs/swagger';
import { WRITE_METHODS, type RouteDefinition } from '../proxy/pipeline.types.js';
import { dtoQueryParams } from './dto-params.js';
import {
  ROUTE_DOCS,
  type ParamDoc,
  type RouteDocs,
  type RouteDocsMeta,
  type SchemaDoc,
} from '../core/ports/docs.port.js';
import { SCHEMA_NAME_MARKER } from './schema-name.js';

/** Query parameters that carry a consumer key: documented as security schemes, never as parameters. */
const KEY_POSITION_PARAMS = new Set(['token', 'sessionid']);

/** Extension carrying a generated operation's route facts (see openapi.document.ts). */
export const ROUTE_EXTENSION = 'x-atrium-route';

export interface RouteExtension {
  readonly id: string;
  readonly upstream: string;
  /** The upstream's gateway prefixes; the first is canonical, the others are aliases. */
  readonly prefixes: readonly string[];
  readonly method: string;
  /** Upstream path template in the vendor's spelling (`/Search/query/`). */
  readonly path: string;
  readonly family: string;
  readonly cacheTtlMs?: number;
  readonly sideEffect?: boolean;
  readonly file?: boolean;
  readonly validated?: boolean;
  /** The upstream's tag description (lifted into `tags` and removed from operations). */
  readonly upstreamDescription?: string;
}

export type RouteDocContext = RouteDocsMeta<RouteDefinition>;

const PATH_PARAM = /\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

function defaultSummary(route: RouteDefinition, upstream: string): string {
  const words = route.id
    .replace(new RegExp(`^${upstream}\\.`), '')
    .split(/[._]/)
    .filter(Boolean)
    .join(' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function seconds(ms: number): string {
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000} h`;
  if (ms % 60_000 === 0) return `${ms / 60_000} min`;
  return `${ms / 1000} s`;
}

function behaviourNotes(route: RouteDefinition): string[] {
  const notes: string[] = [];
  if (route.query)
    notes.push('Parameters are validated by the gateway before any upstream call (no quota spent).');
  if (route.file) notes.push('The answer is a file, streamed as the upstream sends it; never cached.');
  else if (route.sideEffect)
    notes.push('This GET has a side effect upstream: never cached, coalesced or retried.');
  else if (WRITE_METHODS.has(route.method))
    notes.push('A write: never cached or retried; needs a consumer with write permission.');
  else if (route.cacheTtlMs)
    notes.push(
      `Answers are cached for ${seconds(route.cacheTtlMs)} (see the \`X-Cache\` and \`Age\` headers); ` +
        "`If-None-Match` with the answer's `ETag` gives a 304 without a vendor call while the entry is fresh.",
    );
  return notes;
}

export function paramSchema(p: ParamDoc): SchemaDoc {
  const item: SchemaDoc = {
    type: p.type ?? 'string',
    ...(p.enum ? { enum: p.enum } : {}),
    ...(p.format ? { format: p.format } : {}),
    ...(p.minimum !== undefined ? { minimum: p.minimum } : {}),
    ...(p.maximum !== undefined ? { maximum: p.maximum } : {}),
    ...(p.default !== undefined ? { default: p.default } : {}),
  };
  return p.list ? { type: 'array', items: item } : item;
}

/** DTO rules first (they are enforced), then the upstream's common parameters, then the route's own. */
function queryParams(ctx: RouteDocContext, routeDocs: RouteDocs | undefined): ParamDoc[] {
  const seen = new Set<string>();
  const out: ParamDoc[] = [];
  const add = (list: readonly ParamDoc[] | undefined, validated: boolean) => {
    for (const p of list ?? []) {
      if (KEY_POSITION_PARAMS.has(p.name.toLowerCase()) || seen.has(p.name)) continue;
      seen.add(p.name);
      out.push(validated && !p.description ? { ...p, description: 'Validated by the gateway.' } : p);
    }
  };
  if (ctx.route.query) {
    // Descriptions from the docs beat the DTO's error messages; the DTO's rules beat the docs'.
    const described = new Map(
      [...(routeDocs?.query ?? []), ...(ctx.docs?.common ?? [])].map((p) => [p.name, p] as const),
    );
    add(
      dtoQueryParams(ctx.route.query).map((p) => {
        const d = described.get(p.name);
        return d ? { ...d, ...stripUndefined(p), description: d.description ?? p.description } : p;
      }),
      true,
    );
  }
  add(routeDocs?.query, false);
  add(ctx.docs?.common, false);
  return out;
}

function stripUndefined<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}

/**
 * Applies the OpenAPI decorators to one generated handler: summary and behaviour notes, path and query
 * parameters, request body for writes, the success answer, and the route facts as an extension. Security
 * schemes, error answers, operation ids and alias paths are added document-wide (openapi.document.ts).
 */
export function documentRoute(
  target: object,
  name: string,
  descriptor: PropertyDescriptor,
  ctx: RouteDocContext,
): void {
  const { route, upstream } = ctx;
  const routeDocs = ctx.docs?.routes?.[route.id];
  const apply = (d: MethodDecorator) => d(target, name, descriptor);

  const notes = behaviourNotes(route);
  const description = [routeDocs?.description, ...notes].filter(Boolean).join('\n\n');
  apply(
    ApiOperation({
      summary: route.summary ?? routeDocs?.summary ?? defaultSummary(route, upstream),
      ...(description ? { description } : {}),
    }),
  );

  for (const m of route.path.matchAll(PATH_PARAM)) {
    const p = m[1];
    const d = routeDocs?.pathParams?.[p] ?? ctx.docs?.pathParams?.[p];
    apply(
      ApiParam({
        name: p,
        required: true,
        schema: { type: 'string' },
        description: d?.description ?? 'A single path segment (percent-encode `,` `/` and spaces).',
        ...(d?.example ? { example: d.example } : {}),
      }),
    );
  }

  for (const p of queryParams(ctx, routeDocs)) {
    apply(
      ApiQuery({
        name: p.name,
        required: p.required === true,
        ...(p.description ? { description: p.description } : {}),
        schema: paramSchema(p) as Record<string, unknown>,
        ...(p.list ? { style: 'form', explode: false } : {}),
        ...(p.example !== undefined ? { example: p.example } : {}),
      }),
    );
  }

  // DELETE bodies are forwarded too, but OpenAPI 3.0 gives them no semantics: documented for POST/PUT/PATCH.
  if (WRITE_METHODS.has(route.method) && route.method !== 'DELETE') {
    const body = routeDocs?.body;
    const contentTypes = body?.contentTypes ?? ['application/x-www-form-urlencoded', 'application/json'];
    const schema: SchemaDoc = body?.fields
      ? {
          type: 'object',
          properties: Object.fromEntries(
            body.fields.map((f) => [f.name, { ...paramSchema(f), description: f.description }]),
          ),
          required: body.fields.filter((f) => f.required).map((f) => f.name),
          ...(body.example ? { example: body.example } : {}),
        }
      : { type: 'object', additionalProperties: true };
    if (schema.required?.length === 0) delete (schema as { required?: unknown }).required;
    apply(ApiConsumes(...contentTypes));
    apply(
      ApiBody({
        required: false,
        description: body?.description ?? 'Forwarded to the upstream as sent (form-urlencoded or JSON).',
        schema: schema as Record<string, unknown>,
      }),
    );
  }

  const response = routeDocs?.response;
  if (route.file) {
    apply(ApiProduces('application/octet-stream'));
    apply(
      ApiResponse({
        status: 200,
        description: response?.description ?? 'The file, streamed with its content type and disposition.',
        schema: { type: 'string', format: 'binary' },
      }),
    );
  } else {
    apply(ApiProduces('application/json', 'application/xml'));
    const schema: Record<string, unknown> = response?.schema
      ? { ...response.schema, ...(response.name ? { [SCHEMA_NAME_MARKER]: response.name } : {}) }
      : { type: 'object', description: "The upstream's answer, passed through unchanged." };
    apply(
      ApiResponse({
        status: 200,
        description: response?.description ?? "The upstream's answer (JSON, or XML when asked for).",
        schema,
        ...(response?.example !== undefined ? { example: response.example } : {}),
      }),
    );
  }

  const ext: RouteExtension = {
    id: route.id,
    upstream,
    prefixes: ctx.prefixes,
    method: route.method,
    path: route.path,
    family: route.family,
    ...(route.cacheTtlMs !== undefined ? { cacheTtlMs: route.cacheTtlMs } : {}),
    ...(route.sideEffect ? { sideEffect: true } : {}),
    ...(route.file ? { file: true } : {}),
    ...(route.query ? { validated: true } : {}),
    ...(ctx.docs?.description ? { upstreamDescription: ctx.docs.description } : {}),
  };
  apply(ApiExtension(ROUTE_EXTENSION, ext));
}

/** The generated controller's tag: operations are grouped by upstream. */
export function documentController(controller: new (...args: never[]) => unknown, upstream: string): void {
  ApiTags(upstream)(controller);
}

/** Controller classes already documented: their classes outlive any one app (tests build many). */
const documented = new WeakSet<object>();

/**
 * Documents every generated upstream handler of these controllers from its ROUTE_DOCS metadata (set by the
 * proxy's controller factory), once per class, before Swagger scans them: the docs pull from the routes,
 * the proxy never calls the docs.
 */
export function documentUpstreamControllers(controllers: Iterable<new () => unknown>): void {
  for (const controller of controllers) {
    if (documented.has(controller)) continue;
    const proto = controller.prototype as object;
    let upstream: string | undefined;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const descriptor = Object.getOwnPropertyDescriptor(proto, name);
      if (name === 'constructor' || typeof descriptor?.value !== 'function') continue;
      const meta = Reflect.getMetadata(ROUTE_DOCS, descriptor.value as object) as RouteDocContext | undefined;
      if (!meta) continue;
      documentRoute(proto, name, descriptor, meta);
      upstream = meta.upstream;
    }
    if (upstream !== undefined) documentController(controller, upstream);
    documented.add(controller);
  }
}
