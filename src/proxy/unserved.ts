import { GatewayError } from '../core/errors/gateway-error.js';

/** The route tables of the interfaces this deployment does not serve (AppModule provides them). */
export const UNSERVED_ROUTE_TABLES = Symbol('UnservedRouteTables');

/** An interface this deployment does not serve (ATRIUM_UPSTREAMS), as AppModule provides it. */
export interface UnservedInterface {
  readonly name: string;
  readonly title?: string;
  readonly prefixes: readonly string[];
}

/** The one refusal of a call to an interface not served: a direct call, a batch item or a route handler. */
export function notConfigured(u: UnservedInterface): GatewayError {
  return new GatewayError('UPSTREAM_NOT_CONFIGURED', {
    upstream: u.name,
    message: `This deployment does not serve ${u.title ?? u.name} (/${u.prefixes[0]}): ATRIUM_UPSTREAMS leaves it out.`,
  });
}
