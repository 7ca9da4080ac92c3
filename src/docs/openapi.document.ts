import type { INestApplication } from '@nestjs/common';
import { SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { ModulesContainer } from '@nestjs/core';
import { CONSUMER_SECURITY, HEADERS, SECURITY_SCHEMES } from './openapi-components.js';
import { ERROR_RESPONSES, errorComponents } from './openapi-errors.js';
import { API_VERSION, DESCRIPTION } from './openapi-info.js';
import {
  documentUpstreamControllers,
  ROUTE_EXTENSION,
  type RouteExtension,
} from './route-docs.decorators.js';
import { SCHEMA_NAME_MARKER } from './schema-name.js';
import { addViewOperations } from '../views/view-docs.js';
import { ViewsRegistry } from '../views/views.registry.js';
import { ATRIUM_CONFIG, type AtriumConfig } from '../config/atrium-config.js';

// Assembly: the scanned document completed document-wide. What it adds (security, headers, errors, the
// overview) lives in openapi-components.ts, openapi-errors.ts and openapi-info.ts.

type Json = Record<string, unknown>;
type Operation = Json & {
  operationId?: string;
  tags?: string[];
  responses?: Record<string, unknown>;
  security?: unknown[];
  description?: string;
  summary?: string;
};

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace'] as const;

function isOperation(v: unknown): v is Operation {
  return typeof v === 'object' && v !== null;
}

/** `MacroLoginController_login` → `macro.login`; `HealthController_live` → `health.live`. */
function handWrittenOperationId(path: string, raw: string | undefined): string {
  const method =
    raw
      ?.split('_')
      .pop()
      ?.replace(/\[\d+\]$/, '') ?? 'op';
  const first = path.split('/').filter(Boolean)[0] ?? 'root';
  return `${first}.${method}`;
}

function stableSortKeys<T>(obj: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(obj).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** Moves marked inline schemas (see SCHEMA_NAME_MARKER) to `components.schemas` and refers to them. */
function hoistSchemas(value: unknown, into: Json): unknown {
  if (Array.isArray(value)) return value.map((v) => hoistSchemas(v, into));
  if (typeof value !== 'object' || value === null) return value;
  const obj = value as Json;
  const name = obj[SCHEMA_NAME_MARKER];
  if (typeof name === 'string') {
    const { [SCHEMA_NAME_MARKER]: _omit, ...schema } = obj;
    const hoisted = hoistSchemas(schema, into);
    const existing = into[name];
    if (existing !== undefined && JSON.stringify(existing) !== JSON.stringify(hoisted))
      throw new Error(`OpenAPI: two different schemas are named ${name}`);
    into[name] = hoisted;
    return { $ref: `#/components/schemas/${name}` };
  }
  return Object.fromEntries(Object.entries(obj).map(([k, v]) => [k, hoistSchemas(v, into)]));
}

/**
 * The gateway's OpenAPI 3 document, built from the application itself: every controller Nest routes (the
 * generated upstream controllers carry their route facts and docs; hand-written ones are scanned as they
 * are), then completed document-wide: vendor path spellings and alias paths, operation ids equal to route
 * ids, the key positions as security schemes, the error envelope and its codes with examples, and tags per
 * upstream. Deterministic (sorted), so the generated client can be checked for staleness.
 */
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const controllers = [...app.get(ModulesContainer).values()].flatMap((m) =>
    [...m.controllers.values()].map((w) => w.metatype as new () => unknown),
  );
  documentUpstreamControllers(controllers);
  const scanned = SwaggerModule.createDocument(
    app,
    { openapi: '3.0.3', info: { title: 'Atrium gateway', description: DESCRIPTION, version: API_VERSION } },
    // Untagged hand-written controllers are tagged by their path (their upstream's tag under its prefix).
    { autoTagControllers: false },
  );
  // The views in force when the document is built (views are data: a reload is in /docs after a restart).
  const views = app.get(ViewsRegistry, { strict: false }).all();
  const config = app.get<symbol, AtriumConfig>(ATRIUM_CONFIG, { strict: false });
  const served = (name: string) => config.upstreams[name] !== undefined;
  return addViewOperations(markUnserved(finalizeDocument(scanned), served), views, CONSUMER_SECURITY);
}

const NOT_SERVED = 'x-atrium-not-served';

/**
 * The operations and tags of interfaces this deployment does not serve (ATRIUM_UPSTREAMS) say so: their
 * routes stay documented (the interface exists) but answer 404 UPSTREAM_NOT_CONFIGURED here.
 */
export function markUnserved(doc: OpenAPIObject, served: (upstream: string) => boolean): OpenAPIObject {
  const unserved = new Set<string>();
  for (const item of Object.values(doc.paths ?? {}))
    for (const m of METHODS) {
      const op = (item as Record<string, unknown>)[m];
      const upstream = isOperation(op)
        ? (op[ROUTE_EXTENSION] as RouteExtension | undefined)?.upstream
        : undefined;
      if (upstream && !served(upstream)) unserved.add(upstream);
    }
  if (unserved.size === 0) return doc;
  const note = 'Not served by this deployment (ATRIUM_UPSTREAMS): answers 404 `UPSTREAM_NOT_CONFIGURED`.';
  for (const item of Object.values(doc.paths ?? {}))
    for (const m of METHODS) {
      const op = (item as Record<string, unknown>)[m];
      if (!isOperation(op) || !op.tags?.some((t) => unserved.has(t))) continue;
      op[NOT_SERVED] = true;
      op.description = [note, op.description].filter(Boolean).join('\n\n');
    }
  for (const tag of doc.tags ?? [])
    if (unserved.has(tag.name)) {
      (tag as unknown as Record<string, unknown>)[NOT_SERVED] = true;
      tag.description = [note, tag.description].filter(Boolean).join('\n\n');
    }
  return doc;
}

export function finalizeDocument(scanned: OpenAPIObject): OpenAPIObject {
  const schemas: Json = {};
  const paths: Record<string, Record<string, Operation>> = {};
  const tagDescriptions = new Map<string, string | undefined>();
  const prefixOwner = new Map<string, string>();
  const usedIds = new Map<string, number>();

  // First pass: which prefixes belong to which upstream (hand-written routes under them share the tag).
  for (const item of Object.values(scanned.paths ?? {}))
    for (const m of METHODS) {
      const op = (item as Record<string, unknown>)[m];
      if (!isOperation(op)) continue;
      const ext = op[ROUTE_EXTENSION] as RouteExtension | undefined;
      if (ext) for (const p of ext.prefixes) prefixOwner.set(p, ext.upstream);
    }

  const { schemas: errorSchemas, responses: errorResponses } = errorComponents();

  for (const [rawPath, item] of Object.entries(scanned.paths ?? {})) {
    for (const m of METHODS) {
      const found = (item as Record<string, unknown>)[m];
      if (!isOperation(found)) continue;
      const op: Operation = { ...found };
      const ext = op[ROUTE_EXTENSION] as RouteExtension | undefined;
      let path = rawPath;
      const first = rawPath.split('/').filter(Boolean)[0] ?? '';
      if (ext) {
        const { upstreamDescription, ...facts } = ext;
        if (!tagDescriptions.get(ext.upstream)) tagDescriptions.set(ext.upstream, upstreamDescription);
        // The vendor's spelling (trailing slashes, casing) below the prefix the route was served under.
        path = `/${first}${ext.path}`;
        const canonical = first === ext.prefixes[0];
        op.operationId = canonical ? ext.id : `${first}.${ext.id.slice(ext.upstream.length + 1)}`;
        op[ROUTE_EXTENSION] = facts;
        if (!canonical) {
          op['x-atrium-alias-of'] = `/${ext.prefixes[0]}${ext.path}`;
          op.description = [
            `Alias of \`${ext.method} /${ext.prefixes[0]}${ext.path}\` for vendor clients.`,
            op.description,
          ]
            .filter(Boolean)
            .join('\n\n');
        }
        op.tags = [ext.upstream];
        op.security = CONSUMER_SECURITY;
        const responses = { ...(op.responses ?? {}) };
        const ok = responses['200'] as Json | undefined;
        if (ok)
          responses['200'] = {
            ...ok,
            headers: {
              'x-request-id': { $ref: '#/components/headers/RequestId' },
              ...(ext.file || ext.method !== 'GET' || ext.sideEffect
                ? {}
                : {
                    'x-cache': { $ref: '#/components/headers/XCache' },
                    age: { $ref: '#/components/headers/Age' },
                  }),
            },
          };
        if (ext.method === 'GET' && ext.cacheTtlMs && !ext.file && !ext.sideEffect)
          responses['304'] = {
            description: "Not modified: `If-None-Match` named the answer's `ETag`. No body, no vendor call.",
          };
        for (const r of ERROR_RESPONSES) {
          if (r.writesOnly && ext.method === 'GET') continue;
          responses[String(r.status)] = { $ref: `#/components/responses/${r.name}` };
        }
        op.responses = responses;
      } else {
        op.operationId = handWrittenOperationId(rawPath, op.operationId);
        if (!op.tags || op.tags.length === 0) op.tags = [prefixOwner.get(first) ?? first];
        if (!tagDescriptions.has(op.tags[0])) tagDescriptions.set(op.tags[0], undefined);
        const responses = { ...(op.responses ?? {}) };
        for (const [status, r] of Object.entries(responses))
          if (isOperation(r) && !r.description) responses[status] = { ...r, description: 'Answer.' };
        if (!Object.keys(responses).some((s) => s.startsWith('4') || s.startsWith('5')))
          responses.default = {
            description: 'An error, in the gateway envelope.',
            content: { 'application/json': { schema: { $ref: '#/components/schemas/ErrorEnvelope' } } },
          };
        op.responses = responses;
      }
      // Unique operation ids (a hand-written route may share a name with another).
      const base = op.operationId;
      const n = usedIds.get(base) ?? 0;
      usedIds.set(base, n + 1);
      if (n > 0) op.operationId = `${base}.${n + 1}`;
      paths[path] = { ...(paths[path] ?? {}), [m]: hoistSchemas(op, schemas) as Operation };
    }
  }

  const sortedPaths = stableSortKeys(
    Object.fromEntries(
      Object.entries(paths).map(([p, ops]) => [
        p,
        Object.fromEntries(METHODS.filter((m) => ops[m]).map((m) => [m, ops[m]])),
      ]),
    ),
  );
  const upstreamTags = [...new Set(prefixOwner.values())].sort();
  const otherTags = [...tagDescriptions.keys()].filter((t) => !upstreamTags.includes(t)).sort();
  const tags = [...upstreamTags, ...otherTags].map((name) => {
    const description = tagDescriptions.get(name);
    return description ? { name, description } : { name };
  });

  const scannedComponents = (scanned.components ?? {}) as Json;
  return {
    openapi: scanned.openapi,
    info: scanned.info,
    tags,
    paths: sortedPaths,
    components: {
      ...scannedComponents,
      securitySchemes: SECURITY_SCHEMES as unknown as Json,
      headers: HEADERS,
      schemas: stableSortKeys({
        ...((scannedComponents.schemas as Json | undefined) ?? {}),
        ...errorSchemas,
        ...schemas,
      }),
      responses: errorResponses,
    },
  } as OpenAPIObject;
}
