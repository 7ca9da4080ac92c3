import { SetMetadata } from '@nestjs/common';

export const IS_PUBLIC = Symbol('IsPublic');
export const UPSTREAM_ACCESS = Symbol('UpstreamAccess');

export interface UpstreamAccessMeta {
  readonly upstream: string;
  readonly write: boolean;
}

/** No consumer key needed (health, docs, local vendor-compat answers). */
export const Public = (): MethodDecorator & ClassDecorator => SetMetadata(IS_PUBLIC, true);

/** The consumer must be allowed this upstream, and to write when `write` is set. */
export const UpstreamAccess = (upstream: string, write: boolean): MethodDecorator =>
  SetMetadata(UPSTREAM_ACCESS, { upstream, write } satisfies UpstreamAccessMeta);
