import { PerformanceObserver } from 'node:perf_hooks';
import { getHeapSpaceStatistics, setFlagsFromString } from 'node:v8';

/** Default cap of V8's young generation (both semi-spaces), in MiB: `ATRIUM_YOUNG_GENERATION_MB`. */
export const DEFAULT_YOUNG_GENERATION_MB = 8;

/** The semi-spaces' growth factor V8 starts with. */
const V8_GROWTH_FACTOR = 2;

function newSpaceBytes(): number {
  return getHeapSpaceStatistics().find((s) => s.space_name === 'new_space')?.space_size ?? 0;
}

/**
 * The young generation's cap from `ATRIUM_YOUNG_GENERATION_MB` (whole MiB, 0–1024; 0 leaves V8's own
 * sizing). Read straight from the environment: it must act before the modules load. A value the config
 * check refuses (gateway-env.ts) fails the boot there; here it falls back to the default.
 */
export function youngGenerationMb(env: Record<string, string | undefined>): number {
  const raw = env.ATRIUM_YOUNG_GENERATION_MB;
  if (raw === undefined || !/^\d{1,4}$/.test(raw) || Number(raw) > 1024) return DEFAULT_YOUNG_GENERATION_MB;
  return Number(raw);
}

/**
 * Keeps V8's young generation small. By default it grows to 32 MiB (two 16 MiB semi-spaces) as soon as
 * enough objects survive scavenges, and a busy gateway's requests in flight always do: a fifth of the
 * process's memory, mostly garbage. The size is a start-up flag (`--max-semi-space-size`), which a plain
 * `node dist/main.js` does not get; the growth factor is read at each growth, so it can be set at run time:
 * no growth while the modules load, then growth as V8 decides (`release`) up to `mb`, then none.
 *
 * The factor follows the size for the life of the process, not once: V8 shrinks the young generation when
 * allocation slows (an idle minute between bursts), and a factor left at 1 would then pin it at its smallest
 * size for good, a scavenge every megabyte under the next load (a miss cost 1.5–2 × its CPU that way).
 */
export function holdYoungGeneration(mb: number): { release: () => void } {
  if (mb <= 0) return { release: () => undefined };
  setFlagsFromString('--semi-space-growth-factor=1');
  return {
    release: () => {
      const cap = mb * 1024 * 1024;
      let growing: boolean | undefined;
      // After each GC (entries arrive batched, between turns): grow while below the cap, never past it.
      // Growing doubles, and takes many scavenges' worth of survivors, so the cap is seen before a second
      // doubling could pass it.
      const follow = (): void => {
        const below = newSpaceBytes() < cap;
        if (below === growing) return;
        growing = below;
        setFlagsFromString(`--semi-space-growth-factor=${below ? V8_GROWTH_FACTOR : 1}`);
      };
      follow();
      new PerformanceObserver(follow).observe({ entryTypes: ['gc'] });
    },
  };
}
