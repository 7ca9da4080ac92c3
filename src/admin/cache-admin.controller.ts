import { Controller, Get, HttpCode, Logger, Post, Req, UseGuards } from '@nestjs/common';
import { ApiBody, ApiOperation, ApiQuery } from '@nestjs/swagger';
import type { FastifyRequest } from 'fastify';
import { Public } from '../core/auth/auth.decorators.js';
import { GatewayError } from '../core/errors/gateway-error.js';
import { queryObjectOf } from '../core/http/query-string.js';
import { ResponseCache } from '../proxy/response-cache.service.js';
import type { StoreStats } from '../proxy/cache/response-store.js';
import { ProxyService } from '../proxy/proxy.service.js';
import { AdminTokenGuard } from './admin-token.guard.js';

export interface PurgeRequest {
  /** `macro`: purge that upstream's entries (with `pathPrefix`: only below that upstream path). */
  upstream?: string;
  /** Upstream path prefix, e.g. `/feeds`. */
  pathPrefix?: string;
  /** Or a gateway path prefix, e.g. `/macro/feeds` (the upstream is read from its first segment). */
  path?: string;
}

export interface PurgeResult {
  upstream: string;
  pathPrefix: string | null;
  purged: number;
}

/** What each field of a purge means, for the OpenAPI document (body and query alike). */
const PURGE_FIELDS = {
  upstream: 'The upstream whose entries go (macro, company, documents, deals).',
  pathPrefix: 'With upstream: only entries below this upstream path, e.g. /feeds.',
  path: 'Instead of upstream: a gateway path prefix, e.g. /macro/feeds (the upstream is its first segment).',
} as const satisfies Record<keyof PurgeRequest, string>;

const PURGE_REQUEST_SCHEMA = {
  type: 'object',
  properties: {
    upstream: { type: 'string', description: PURGE_FIELDS.upstream },
    pathPrefix: { type: 'string', description: PURGE_FIELDS.pathPrefix },
    path: { type: 'string', description: PURGE_FIELDS.path },
  },
  example: { upstream: 'macro', pathPrefix: '/feeds' },
};

function invalid(message: string): GatewayError {
  return new GatewayError('VALIDATION_FAILED', { parameter: 'body', message });
}

/** Paths in keys are built with encodeURIComponent (upper-case escapes) and single slashes. */
function normalisePath(p: string): string {
  const s = p.replace(/\/{2,}/g, '/').replace(/%[0-9a-f]{2}/gi, (e) => e.toUpperCase());
  return s.startsWith('/') ? s : '/' + s;
}

/** Operator endpoints of the response cache, behind the admin token (not consumer keys). */
@Public()
@UseGuards(AdminTokenGuard)
@Controller('admin/cache')
export class CacheAdminController {
  private readonly logger = new Logger('Admin');

  constructor(
    private readonly cache: ResponseCache,
    private readonly proxy: ProxyService,
  ) {}

  @Get()
  async stats(): Promise<StoreStats> {
    return this.cache.stats();
  }

  /**
   * `POST /admin/cache/purge` with `{"upstream":"macro"}`, `{"upstream":"macro","pathPrefix":"/feeds"}` or
   * `{"path":"/macro/feeds"}` (JSON body, or the same fields as query parameters).
   */
  @Post('purge')
  @HttpCode(200)
  @ApiOperation({
    summary: 'Purge cached answers of one upstream',
    description:
      'Give `upstream` (with an optional upstream `pathPrefix`), or a gateway `path` prefix, as a JSON ' +
      'body or as query parameters. Answers `{ upstream, pathPrefix, purged }`. Behind the operator token.',
  })
  @ApiBody({ required: false, schema: PURGE_REQUEST_SCHEMA })
  // Listed in the document in the reverse order of these lines (decorators apply bottom-up).
  @ApiQuery({ name: 'path', required: false, schema: { type: 'string' }, description: PURGE_FIELDS.path })
  @ApiQuery({
    name: 'pathPrefix',
    required: false,
    schema: { type: 'string' },
    description: PURGE_FIELDS.pathPrefix,
  })
  @ApiQuery({
    name: 'upstream',
    required: false,
    schema: { type: 'string' },
    description: PURGE_FIELDS.upstream,
  })
  async purge(@Req() req: FastifyRequest): Promise<PurgeResult> {
    const input = this.readInput(req);
    const { upstream, pathPrefix } = this.resolve(input);
    let purged: number;
    try {
      purged = await this.cache.purge(upstream, pathPrefix);
    } catch (e) {
      throw new GatewayError('UPSTREAM_UNAVAILABLE', {
        message: 'The shared cache (Redis) did not answer; nothing was purged. Retry later.',
        cause: e,
      });
    }
    this.logger.log(`cache purge upstream=${upstream} pathPrefix=${pathPrefix ?? '*'} purged=${purged}`);
    return { upstream, pathPrefix: pathPrefix ?? null, purged };
  }

  private readInput(req: FastifyRequest): PurgeRequest {
    const q = queryObjectOf(req);
    const fromQuery: PurgeRequest = {};
    for (const k of ['upstream', 'pathPrefix', 'path'] as const) {
      const v = q[k];
      if (Array.isArray(v)) throw invalid(`${k} must be given once.`);
      if (v !== undefined) fromQuery[k] = v;
    }
    const body = req.body;
    if (!Buffer.isBuffer(body) || body.length === 0) return fromQuery;
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      throw invalid('The body must be a JSON object.');
    }
    if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed))
      throw invalid('The body must be a JSON object.');
    const out: PurgeRequest = { ...fromQuery };
    for (const k of ['upstream', 'pathPrefix', 'path'] as const) {
      const v = (parsed as Record<string, unknown>)[k];
      if (v === undefined) continue;
      if (typeof v !== 'string') throw invalid(`${k} must be a string.`);
      out[k] = v;
    }
    return out;
  }

  private resolve(input: PurgeRequest): { upstream: string; pathPrefix?: string } {
    const known = this.proxy.all().map((u) => u.def);
    if (input.path !== undefined) {
      if (input.upstream !== undefined || input.pathPrefix !== undefined)
        throw invalid('Give either path, or upstream with an optional pathPrefix.');
      const path = normalisePath(input.path);
      const slash = path.indexOf('/', 1);
      const first = slash === -1 ? path.slice(1) : path.slice(1, slash);
      const def = known.find((d) => d.prefixes.includes(first));
      if (!def) throw invalid(`No upstream is served under /${first}.`);
      const rest = slash === -1 ? '' : path.slice(slash);
      return { upstream: def.name, pathPrefix: rest && rest !== '/' ? rest : undefined };
    }
    if (!input.upstream) throw invalid('upstream (or path) is required.');
    if (!known.some((d) => d.name === input.upstream))
      throw invalid(`Unknown upstream; known: ${known.map((d) => d.name).join(', ')}.`);
    const prefix = input.pathPrefix === undefined ? undefined : normalisePath(input.pathPrefix);
    return { upstream: input.upstream, pathPrefix: prefix && prefix !== '/' ? prefix : undefined };
  }
}
