import type {
  ProxyRequest,
  RouteDefinition,
  UpstreamCredentials,
  UpstreamErrorMapper,
} from './pipeline.types.js';
import type { ParamRules } from './canonical-request.js';
import type { TransportOptions } from './transport/undici.transport.js';

/** When an upstream says new figures land: a window in epoch ms (`from` = `to` for an instant). */
export interface ReleaseWindow {
  readonly from: number;
  readonly to: number;
}

/**
 * How an upstream tells when a resource's answer may change: which of its own calls list the resource's
 * releases, and how to read their windows out of those answers. Watches poll often around a release and
 * rarely between (src/watch); a resource it gives no schedule for is polled at its route's TTL.
 */
export interface WatchSchedule {
  /**
   * The gateway paths (e.g. `/<prefix>/…`) listing the releases of a route's resource: one per thing it
   * reads that has releases (a list of series: one per series), none when the resource has no schedule.
   * The resource changes around a release of any of them.
   */
  pathsOf(route: RouteDefinition, params: Readonly<Record<string, string>>): readonly string[];
  /** The release windows that path's answer (parsed JSON) lists; none when it lists none or is unreadable. */
  windowsOf(body: unknown): ReleaseWindow[];
}

/**
 * Everything the generic proxy needs to know about one upstream interface, built from an upstream's
 * declaration (src/upstreams) and its config; the proxy itself knows no vendor.
 */
export interface UpstreamDefinition {
  /** `macro`: metric label, consumer permission name. */
  readonly name: string;
  /** "the macroeconomic data service": used in messages. */
  readonly title: string;
  /** Gateway path prefixes: `['documents', 'news']`. The first is canonical. */
  readonly prefixes: readonly string[];
  readonly routes: readonly RouteDefinition[];
  /** Language codes the upstream supports; `lang` outside them is a 400. Absent → no language handling. */
  readonly languages?: readonly string[];
  readonly defaultLanguage?: string;
  /** Answer formats the upstream can give; absent → json and xml. XML asked of a JSON-only one → 415. */
  readonly formats?: readonly ('json' | 'xml')[];
  /** Query parameters every route reads alike (the vendor's common conventions); a route's own rules win. */
  readonly commonParams?: ParamRules;
  readonly errorMapper: UpstreamErrorMapper;
  readonly credentials: UpstreamCredentials;
  readonly transport: Omit<TransportOptions, 'upstream' | 'title'>;
  /** Total deadline of one call, retries included. */
  readonly timeoutMs: number;
  /** Vendor conventions applied to every built request before the pipeline (e.g. how XML is asked for). */
  readonly shapeRequest?: (req: ProxyRequest) => void;
  /**
   * Facts of this upstream for `/health/ready` beyond reachability and limits (e.g. `{ session: … }` of a
   * login-based credential). Readiness pulls it at each check; `session.state === 'backoff'` marks the
   * upstream degraded.
   */
  readonly readinessFacts?: () => Record<string, unknown>;
  /** When the upstream's resources change (its release calendar): watches time their polls by it. */
  readonly watchSchedule?: WatchSchedule;
}
