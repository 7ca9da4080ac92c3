import type { OpenAPIObject } from '@nestjs/swagger';
import type { ViewDefinition, ViewParam } from './view-definition.js';

type Json = Record<string, unknown>;

/** The error answers a view call may give (components of the gateway document). */
const VIEW_ERRORS: Readonly<Record<string, string>> = {
  '400': 'BadRequest',
  '401': 'Unauthenticated',
  '403': 'Forbidden',
  '404': 'NotFound',
  '429': 'RateLimited',
  '500': 'Internal',
  '502': 'UpstreamFailure',
  '503': 'UpstreamUnavailable',
  '504': 'UpstreamTimeout',
};

function paramSchema(p: ViewParam): Json {
  return {
    type: p.type,
    ...(p.pattern ? { pattern: p.pattern.source } : {}),
    ...(p.enum ? { enum: p.enum } : {}),
    ...(p.default !== undefined ? { default: p.default } : {}),
  };
}

/** `company-overview` → `CompanyOverview`. */
function pascal(name: string): string {
  return name
    .split(/[^A-Za-z0-9]+/)
    .filter(Boolean)
    .map((s) => s.charAt(0).toUpperCase() + s.slice(1))
    .join('');
}

const PART_REPORT: Json = {
  type: 'object',
  required: ['status', 'durationMs'],
  description: 'How one part was served.',
  properties: {
    status: { type: 'integer', description: "The part's HTTP status, as a direct call would get it." },
    cache: {
      type: 'string',
      enum: ['HIT', 'MISS', 'STALE', 'COALESCED', 'BYPASS'],
      description: 'X-Cache of the part.',
    },
    ageSeconds: { type: 'integer', description: 'Age of a cached answer.' },
    durationMs: { type: 'integer' },
    error: { $ref: '#/components/schemas/ErrorBody' },
  },
};

/**
 * Adds every view to the gateway's OpenAPI document as an operation of its own (`GET /views/<name>`, id
 * `views.<name>`) with its parameters and answer shape, so the generated client has a typed method per view.
 * They are served by the one `GET /views/{name}` route (`x-atrium-view` marks them).
 */
export function addViewOperations(
  doc: OpenAPIObject,
  views: readonly ViewDefinition[],
  security: readonly Json[],
): OpenAPIObject {
  const paths = { ...(doc.paths as Record<string, Json>) };
  const schemas: Json = { ...((doc.components?.schemas ?? {}) as Json), ViewPartReport: PART_REPORT };
  for (const view of views) {
    const name = `View${pascal(view.name)}`;
    schemas[name] = {
      type: 'object',
      required: ['data', 'parts', 'complete'],
      properties: {
        data: {
          type: 'object',
          description:
            "Each part's answer under its name (null when an optional part failed); `fields=` cuts it down.",
          properties: Object.fromEntries(
            view.parts.map((p) => [
              p.name,
              {
                // Untyped (the vendors' answers are not described), so null needs no `nullable`.
                description: `${p.optional ? 'Optional (null when it failed): t' : 'T'}he answer of \`GET /${p.prefix}${p.route.path}\` (${p.route.id})${p.fields ? `, only ${p.fields.paths.join(', ')}` : ''}.`,
              },
            ]),
          ),
        },
        parts: {
          type: 'object',
          required: view.parts.map((p) => p.name),
          properties: Object.fromEntries(
            view.parts.map((p) => [p.name, { $ref: '#/components/schemas/ViewPartReport' }]),
          ),
        },
        complete: {
          type: 'boolean',
          description: 'Every part answered (also the `x-atrium-complete` header).',
        },
      },
    };
    const parts = view.parts
      .map(
        (p) =>
          `- \`${p.name}\`: \`${p.route.id}\`${p.optional ? ' (optional)' : ''}${p.dependsOn.length ? `, after ${p.dependsOn.map((d) => `\`${d}\``).join(', ')}` : ''}`,
      )
      .join('\n');
    paths[`/views/${view.name}`] = {
      get: {
        operationId: `views.${view.name}`,
        tags: ['views'],
        summary: view.description.split(/(?<=\.)\s/)[0],
        description: `${view.description}\n\nParts (each runs as you, through the whole gateway: permission, quota, cache):\n${parts}`,
        security,
        parameters: [
          ...view.params.map((p) => ({
            name: p.name,
            in: 'query',
            required: p.required,
            ...(p.description ? { description: p.description } : {}),
            schema: paramSchema(p),
            ...(p.example !== undefined ? { example: p.example } : {}),
          })),
          {
            name: 'fields',
            in: 'query',
            required: false,
            description:
              'Keep only these paths of `data` (dotted, `[]` for arrays), e.g. `company.data.items[].companyName`.',
            schema: { type: 'string' },
          },
          {
            name: 'timeoutMs',
            in: 'query',
            required: false,
            description:
              "The view's deadline in ms (at most the gateway's maximum); parts still running then are reported as 504.",
            schema: { type: 'integer', minimum: 1 },
          },
        ],
        responses: {
          '200': {
            description: 'The composed answer (`complete: false` when an optional part failed).',
            headers: {
              'x-request-id': { $ref: '#/components/headers/RequestId' },
              etag: {
                description: 'Validator of `data`; send it back as `If-None-Match`.',
                schema: { type: 'string' },
              },
              'x-atrium-complete': {
                description: '`true` when every part answered.',
                schema: { type: 'string' },
              },
            },
            content: { 'application/json': { schema: { $ref: `#/components/schemas/${name}` } } },
          },
          '304': { description: 'Nothing changed since the ETag sent in `If-None-Match`.' },
          ...Object.fromEntries(
            Object.entries(VIEW_ERRORS).map(([s, r]) => [s, { $ref: `#/components/responses/${r}` }]),
          ),
        },
        'x-atrium-view': {
          name: view.name,
          parts: view.parts.map((p) => ({
            name: p.name,
            route: p.route.id,
            optional: p.optional,
            step: p.step,
          })),
        },
      },
    };
  }
  const sorted = Object.fromEntries(Object.entries(paths).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
  const sortedSchemas = Object.fromEntries(
    Object.entries(schemas).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)),
  );
  const tags = doc.tags?.some((t) => t.name === 'views')
    ? doc.tags
    : [...(doc.tags ?? []), { name: 'views', description: 'Composite views: one call for one screen.' }];
  return {
    ...doc,
    tags,
    paths: sorted,
    components: {
      ...doc.components,
      schemas: sortedSchemas as NonNullable<OpenAPIObject['components']>['schemas'],
    },
  };
}
