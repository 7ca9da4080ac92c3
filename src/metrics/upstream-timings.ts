import { Injectable } from '@nestjs/common';

/** More in-flight entries than this means answers never came back for them (aborted): drop the oldest. */
const MAX_ENTRIES = 20_000;

/**
 * Upstream time per request, from the pipeline (which sees request ids, not Fastify requests) to the
 * response hook that writes the log line and the gateway-time histogram. An entry lives from the upstream
 * call to the end of its response. Two in-flight requests that share a client-sent request id share an
 * entry (the sum is then reported on whichever finishes first).
 */
@Injectable()
export class UpstreamTimings {
  private readonly ms = new Map<string, number>();

  add(requestId: string, ms: number): void {
    const prev = this.ms.get(requestId);
    this.ms.set(requestId, prev === undefined ? ms : prev + ms);
    if (this.ms.size > MAX_ENTRIES) {
      const oldest = this.ms.keys().next();
      if (!oldest.done) this.ms.delete(oldest.value);
    }
  }

  take(requestId: string): number | undefined {
    const v = this.ms.get(requestId);
    if (v !== undefined) this.ms.delete(requestId);
    return v;
  }

  get size(): number {
    return this.ms.size;
  }
}
