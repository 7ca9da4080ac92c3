import { Inject, Module, type OnModuleInit } from '@nestjs/common';
import { ATRIUM_CONFIG, type AtriumConfig } from '../../config/atrium-config.js';
import { ProxyModule } from '../../proxy/proxy.module.js';
import { ProxyService } from '../../proxy/proxy.service.js';
import { createUpstreamController } from '../../proxy/upstream-controller.factory.js';
import type { UpstreamDefinition } from '../../proxy/upstream-definition.js';
import { QueryTokenCredentials } from '../shared/static-token.credentials.js';
import { companyErrorMapper } from './company-error.mapper.js';
import { COMPANY_PREFIXES, COMPANY_TITLE, COMPANY_UPSTREAM } from './company.constants.js';
import { COMPANY_ROUTES } from './company.routes.js';

export const COMPANY_DEFINITION = Symbol('CompanyDefinition');

export function companyDefinition(config: AtriumConfig): UpstreamDefinition {
  const u = config.upstreams.company;
  return {
    name: COMPANY_UPSTREAM,
    title: COMPANY_TITLE,
    prefixes: COMPANY_PREFIXES,
    routes: COMPANY_ROUTES,
    errorMapper: companyErrorMapper,
    // Only JSON is known of the company interface (upstreams.md §3): XML asked for is a 415, never JSON.
    formats: ['json'],
    // The vendor takes its key as the `token` query parameter on every call (upstreams.md §3).
    credentials: new QueryTokenCredentials('token', u.token!),
    timeoutMs: u.timeoutMs,
    transport: {
      baseUrl: u.baseUrl,
      connections: u.connections,
      keepAliveTimeoutMs: 30_000,
      connectTimeoutMs: u.connectTimeoutMs,
      headersTimeoutMs: u.timeoutMs,
      bodyTimeoutMs: u.timeoutMs,
      maxResponseBytes: config.maxResponseBytes,
    },
  };
}

export const CompanyController = createUpstreamController({
  name: COMPANY_UPSTREAM,
  prefixes: COMPANY_PREFIXES,
  routes: COMPANY_ROUTES,
});

/** The company data interface v2 (EMIS) under `/company`. */
@Module({
  imports: [ProxyModule],
  controllers: [CompanyController],
  providers: [{ provide: COMPANY_DEFINITION, useFactory: companyDefinition, inject: [ATRIUM_CONFIG] }],
})
export class CompanyModule implements OnModuleInit {
  constructor(
    private readonly proxy: ProxyService,
    @Inject(COMPANY_DEFINITION) private readonly definition: UpstreamDefinition,
  ) {}

  onModuleInit(): void {
    this.proxy.register(this.definition);
  }
}
