// Loaded into the gateway process by the soak (`node --import <this> dist/main.js`), never by production:
// once a second it sends the process's memory, event-loop delay and open handles to the soak runner over the
// IPC channel. It adds one timer to the process and nothing to the request path, so the gateway's own code
// is measured unchanged.
import { monitorEventLoopDelay } from 'node:perf_hooks';

export interface SoakSample {
  /** ms since the probe started. */
  t: number;
  rss: number;
  heapUsed: number;
  heapTotal: number;
  external: number;
  arrayBuffers: number;
  /** Event-loop delay over the last second (ms): mean, p99, max. */
  elMean: number;
  elP99: number;
  elMax: number;
  /** Active handles and requests (process.getActiveResourcesInfo), by type. */
  handles: number;
  handleTypes: Record<string, number>;
}

if (process.env.ATRIUM_SOAK_PROBE === '1' && typeof process.send === 'function') {
  const started = performance.now();
  const el = monitorEventLoopDelay({ resolution: 10 });
  el.enable();
  const sample = (): SoakSample => {
    const m = process.memoryUsage();
    const types: Record<string, number> = {};
    const active = process.getActiveResourcesInfo();
    for (const t of active) types[t] = (types[t] ?? 0) + 1;
    const sample: SoakSample = {
      t: Math.round(performance.now() - started),
      rss: m.rss,
      heapUsed: m.heapUsed,
      heapTotal: m.heapTotal,
      external: m.external,
      arrayBuffers: m.arrayBuffers,
      elMean: el.mean / 1e6,
      elP99: el.percentile(99) / 1e6,
      elMax: el.max / 1e6,
      handles: active.length,
      handleTypes: types,
    };
    return sample;
  };
  const timer = setInterval(() => {
    const s = sample();
    el.reset();
    process.send?.({ soak: s });
  }, 1000);
  timer.unref();
  // On request (the watch bench): a sample after a full collection, when the process runs with --expose-gc.
  process.on('message', (m: { settled?: boolean }) => {
    if (!m?.settled) return;
    (globalThis as { gc?: () => void }).gc?.();
    process.send?.({ settled: sample() });
  });
  // The IPC channel alone must not keep the gateway alive at shutdown.
  process.channel?.unref();
}
