/**
 * Waits for a condition instead of a fixed time: polls `check` until it returns something truthy (or stops
 * throwing) and returns that. The ceiling is generous on purpose — a loaded 2-core machine is slow, and a
 * passing run never waits for it; a failing run reports the last value or error.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  opts: { timeoutMs?: number; intervalMs?: number; what?: string } = {},
): Promise<NonNullable<T>> {
  const timeoutMs = opts.timeoutMs ?? 15_000;
  const intervalMs = opts.intervalMs ?? 25;
  const until = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value) return value;
      last = value;
    } catch (err) {
      last = err;
    }
    if (Date.now() >= until) {
      const detail = last instanceof Error ? last.message : JSON.stringify(last);
      throw new Error(`${opts.what ?? 'condition'} not met within ${timeoutMs} ms (last: ${detail})`);
    }
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * eventually() for suites that report a condition never met as one of their findings instead of failing at
 * once: true when `check` held within `timeoutMs`, false otherwise.
 */
export async function met(
  check: () => boolean | Promise<boolean>,
  timeoutMs: number,
  intervalMs = 25,
): Promise<boolean> {
  try {
    await eventually(check, { timeoutMs, intervalMs });
    return true;
  } catch {
    return false;
  }
}
