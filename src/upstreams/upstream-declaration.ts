import type { Type } from '@nestjs/common';
import type { AtriumConfig, UpstreamConfig, UpstreamConfigSpec } from '../config/atrium-config.js';
import type { GatewayError } from '../core/errors/gateway-error.js';
import type { SecretRedactor } from '../core/logging/secret-redactor.js';
import type { UpstreamDocs } from '../core/ports/docs.port.js';
import type {
  ProxyRequest,
  RouteDefinition,
  UpstreamCredentials,
  UpstreamErrorMapper,
} from '../proxy/pipeline.types.js';
import type { ParamRules } from '../proxy/canonical-request.js';
import type { UpstreamDefinition, WatchSchedule } from '../proxy/upstream-definition.js';

/** What the gateway hands an upstream's factories when it builds the upstream. */
export interface UpstreamContext {
  /** Scrubs secrets from answers, errors and logs; a login step registers its session ids with it. */
  readonly redactor: SecretRedactor;
}

/**
 * One upstream interface, declared as data: each `src/upstreams/<name>/` exports one, and `index.ts` lists
 * them. The generic UpstreamsModule turns each into its controllers, its pipeline (through the
 * UpstreamDefinition built below), its error shape and its readiness facts; main.ts passes the list to
 * the config loader, which reads `UPSTREAM_<NAME>_*` by what `config` declares.
 */
export interface UpstreamDeclaration<Name extends string = string> extends UpstreamConfigSpec {
  /** `macro`: metric label, consumer permission name, config namespace. Spelled here and nowhere else. */
  readonly name: Name;
  /** "the macroeconomic data service": used in messages. */
  readonly title: string;
  /** Gateway path prefixes: `['documents', 'news']`. The first is canonical. */
  readonly prefixes: readonly string[];
  readonly routes: readonly RouteDefinition[];
  /** OpenAPI annotations of the routes (parameters, examples), keyed by route id. */
  readonly docs?: UpstreamDocs;
  /** Language codes the upstream supports; `lang` outside them is a 400. Absent → no language handling. */
  readonly languages?: readonly string[];
  readonly defaultLanguage?: string;
  /** Answer formats the upstream can give; absent → json and xml. XML asked of a JSON-only one → 415. */
  readonly formats?: readonly ('json' | 'xml')[];
  /** Query parameters every route reads alike (the vendor's common conventions); a route's own rules win. */
  readonly commonParams?: ParamRules;
  readonly errorMapper: UpstreamErrorMapper;
  /** Vendor-shaped fields beside `error` in every error body under the prefixes (the vendor's clients read them). */
  readonly errorShape?: (ctx: UpstreamContext) => (err: GatewayError) => Record<string, unknown>;
  /** Vendor conventions applied to every built request before the pipeline (e.g. how XML is asked for). */
  readonly shapeRequest?: (req: ProxyRequest) => void;
  /** The upstream's credential, from its validated config (`config.credentials` says which settings exist). */
  readonly credentials: (config: UpstreamConfig, ctx: UpstreamContext) => UpstreamCredentials;
  /** Facts `/health/ready` shows for the upstream beside its probe (a login step's session state). */
  readonly readinessFacts?: (credentials: UpstreamCredentials) => Record<string, unknown>;
  /** Hand-written controllers under the prefixes (calls the gateway answers itself), before the routes. */
  readonly controllers?: readonly Type<unknown>[];
  /** Where the vendor publishes when figures change (a release calendar): watches poll around releases. */
  readonly watchSchedule?: WatchSchedule;
  /** What the sandbox plays the vendor with: its key (default), or a username and password (the login step). */
  readonly sandboxCredentials?: 'token' | 'login';
}

/** Declares an upstream; keeps its name a literal type (`UpstreamName` is the union of them). */
export function defineUpstream<const Name extends string>(
  declaration: UpstreamDeclaration<Name>,
): UpstreamDeclaration<Name> {
  return declaration;
}

/** The upstream as the proxy runs it: its credential built and its transport settings from config. */
export function upstreamDefinitionOf(
  d: UpstreamDeclaration,
  config: AtriumConfig,
  ctx: UpstreamContext,
): UpstreamDefinition {
  const u = config.upstreams[d.name];
  if (!u)
    throw new Error(`upstream ${d.name}: no configuration (its declaration was not passed to loadConfig)`);
  const credentials = d.credentials(u, ctx);
  const facts = d.readinessFacts;
  return {
    name: d.name,
    title: d.title,
    prefixes: d.prefixes,
    routes: d.routes,
    ...(d.languages && { languages: d.languages }),
    ...(d.defaultLanguage && { defaultLanguage: d.defaultLanguage }),
    ...(d.formats && { formats: d.formats }),
    ...(d.commonParams && { commonParams: d.commonParams }),
    errorMapper: d.errorMapper,
    credentials,
    timeoutMs: u.timeoutMs,
    ...(d.shapeRequest && { shapeRequest: d.shapeRequest }),
    ...(facts && { readinessFacts: () => facts(credentials) }),
    ...(d.watchSchedule && { watchSchedule: d.watchSchedule }),
    transport: {
      baseUrl: u.baseUrl,
      connections: u.connections,
      keepAliveTimeoutMs: 30_000,
      connectTimeoutMs: u.connectTimeoutMs,
      // One deadline for the whole call: headers and body each get all of it.
      headersTimeoutMs: u.timeoutMs,
      bodyTimeoutMs: u.timeoutMs,
      maxResponseBytes: config.maxResponseBytes,
    },
  };
}
