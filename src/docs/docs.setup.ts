import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import { SwaggerModule } from '@nestjs/swagger';
import { buildOpenApiDocument } from './openapi.document.js';

/**
 * Swagger UI at `/docs`, the document at `/docs/json` (and `/docs/yaml`). Public: the docs describe the
 * surface, never a key. The document is built on first request, once, from the routed application.
 */
export function setupDocs(app: NestFastifyApplication): void {
  SwaggerModule.setup('docs', app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: 'docs/json',
    yamlDocumentUrl: 'docs/yaml',
    customSiteTitle: 'Atrium API',
    swaggerOptions: {
      persistAuthorization: false,
      displayOperationId: true,
      docExpansion: 'none',
      filter: true,
      tagsSorter: 'alpha',
    },
  });
}
