import { Controller, Get, Req, Res, UseGuards } from '@nestjs/common';
import { ApiOperation, ApiProduces, ApiQuery } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AdminTokenGuard } from '../admin/admin-token.guard.js';
import { Public } from '../core/auth/auth.decorators.js';
import { GatewayError } from '../core/errors/gateway-error.js';
import { queryObjectOf } from '../core/http/query-string.js';
import { DAY_MS, dayOf, parseDay, USAGE_COUNTER_NAMES } from './usage-counters.js';
import type { UsageReport } from './usage-recorder.js';
import { UsageService } from './usage.service.js';

/** Longest range one report covers. */
export const MAX_REPORT_DAYS = 366;
const ID = /^[A-Za-z0-9._-]{1,64}$/;

function invalid(parameter: string, message: string): GatewayError {
  return new GatewayError('VALIDATION_FAILED', { parameter, message });
}

/** Comma-separated values; none of ours needs quoting (days, ids, numbers). */
export function usageCsv(report: UsageReport): string {
  const head = ['day', 'consumer', 'upstream', ...USAGE_COUNTER_NAMES];
  const lines = [head.join(',')];
  for (const r of report.rows)
    lines.push([r.day, r.consumer, r.upstream, ...USAGE_COUNTER_NAMES.map((n) => r[n])].join(','));
  return lines.join('\r\n') + '\r\n';
}

/**
 * `GET /admin/usage?from=&to=&consumer=&upstream=`: vendor usage per day, consumer and upstream, as JSON,
 * or CSV (`Accept: text/csv` or `format=csv`). Behind the operator token, like the cache admin API.
 */
@Public()
@UseGuards(AdminTokenGuard)
@Controller('admin/usage')
export class UsageController {
  constructor(private readonly usage: UsageService) {}

  @Get()
  @ApiOperation({
    summary: 'Vendor usage per day, consumer and upstream',
    description:
      'Requests, answers from the cache, coalesced answers, vendor calls and their errors, quota refusals ' +
      'and the vendor calls the shield saved, per UTC day, ' +
      `consumer and upstream; at most ${MAX_REPORT_DAYS} days. JSON, or CSV with \`Accept: text/csv\` or ` +
      '`format=csv`. Behind the operator token.',
  })
  @ApiProduces('application/json', 'text/csv')
  // Listed in the document in the reverse order of these lines (decorators apply bottom-up).
  @ApiQuery({ name: 'format', required: false, enum: ['json', 'csv'], description: 'Answer format.' })
  @ApiQuery({
    name: 'upstream',
    required: false,
    schema: { type: 'string', pattern: ID.source },
    description: 'Only this upstream (macro, company, documents, deals).',
  })
  @ApiQuery({
    name: 'consumer',
    required: false,
    schema: { type: 'string', pattern: ID.source },
    description: 'Only this consumer id.',
  })
  @ApiQuery({
    name: 'to',
    required: false,
    schema: { type: 'string', format: 'date' },
    description: 'Last day, YYYY-MM-DD (UTC); default today.',
  })
  @ApiQuery({
    name: 'from',
    required: false,
    schema: { type: 'string', format: 'date' },
    description: 'First day, YYYY-MM-DD (UTC); default `to`.',
  })
  async report(@Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    if (!this.usage.enabled)
      throw new GatewayError('NOT_FOUND', { message: 'Usage counting is off (ATRIUM_USAGE=off).' });
    const q = queryObjectOf(req);
    const one = (k: string): string | undefined => {
      const v = q[k];
      if (Array.isArray(v)) throw invalid(k, `${k} must be given once.`);
      return v === '' ? undefined : v;
    };
    const today = parseDay(dayOf(Date.now()))!;
    const toText = one('to');
    const fromText = one('from');
    const toMs = toText === undefined ? today : parseDay(toText);
    if (toMs === undefined) throw invalid('to', 'to must be a day, YYYY-MM-DD (UTC).');
    const fromMs = fromText === undefined ? toMs : parseDay(fromText);
    if (fromMs === undefined) throw invalid('from', 'from must be a day, YYYY-MM-DD (UTC).');
    if (fromMs > toMs) throw invalid('from', 'from must not be after to.');
    if ((toMs - fromMs) / DAY_MS + 1 > MAX_REPORT_DAYS)
      throw invalid('from', `A report covers at most ${MAX_REPORT_DAYS} days.`);
    const consumer = one('consumer');
    if (consumer !== undefined && !ID.test(consumer)) throw invalid('consumer', 'Not a consumer id.');
    const upstream = one('upstream');
    if (upstream !== undefined && !ID.test(upstream)) throw invalid('upstream', 'Not an upstream name.');
    const format = one('format');
    if (format !== undefined && format !== 'json' && format !== 'csv')
      throw invalid('format', 'format must be json or csv.');

    let report: UsageReport;
    try {
      report = await this.usage.report({ fromMs, toMs, consumer, upstream });
    } catch (e) {
      throw new GatewayError('UPSTREAM_UNAVAILABLE', {
        message:
          'The usage store (database or Redis) did not answer; counts are kept and sent when it is back. Retry later.',
        cause: e,
      });
    }
    const accept = req.headers.accept ?? '';
    const csv = format === 'csv' || (format === undefined && /\btext\/csv\b/i.test(accept));
    void reply.header('cache-control', 'no-store');
    if (csv)
      void reply
        .header('content-type', 'text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="atrium-usage-${report.from}-${report.to}.csv"`)
        .send(usageCsv(report));
    else void reply.header('content-type', 'application/json; charset=utf-8').send(JSON.stringify(report));
  }
}
