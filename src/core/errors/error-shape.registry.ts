import { Injectable } from '@nestjs/common';
import type { GatewayError } from './gateway-error.js';

/**
 * Adds vendor-shaped fields beside `error` for requests under a path prefix (so vendor clients can read
 * gateway errors). Upstream
 * modules register theirs; core knows no vendor.
 */
export interface ErrorShapeExtension {
  /** First path segments this shape applies to, e.g. ['macro']. */
  readonly prefixes: readonly string[];
  extend(err: GatewayError): Record<string, unknown>;
}

@Injectable()
export class ErrorShapeRegistry {
  private readonly byPrefix = new Map<string, ErrorShapeExtension>();

  register(ext: ErrorShapeExtension): void {
    for (const p of ext.prefixes) this.byPrefix.set(p, ext);
  }

  /** The extension for a request URL (its first path segment), if any. */
  forUrl(url: string): ErrorShapeExtension | undefined {
    let start = 0;
    while (url.charCodeAt(start) === 47 /* / */) start++;
    let end = start;
    while (end < url.length) {
      const c = url.charCodeAt(end);
      if (c === 47 || c === 63 /* ? */) break;
      end++;
    }
    return this.byPrefix.get(url.slice(start, end));
  }
}
