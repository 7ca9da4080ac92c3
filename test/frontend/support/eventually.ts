import type { Locator } from 'playwright-core';

/**
 * Polls a locator's text until `want` matches or the timeout passes, and returns the last text seen, so
 * a plain Jest expectation after it either passes or fails showing what the page said.
 */
export async function textWhen(
  locator: Locator,
  want: RegExp | ((text: string) => boolean),
  timeoutMs = 5000,
): Promise<string> {
  const test = typeof want === 'function' ? want : (t: string) => want.test(t);
  const until = Date.now() + timeoutMs;
  for (;;) {
    const text =
      (await locator
        .first()
        .textContent({ timeout: 1000 })
        .catch(() => null)) ?? '';
    if (test(text) || Date.now() > until) return text;
    await new Promise((r) => setTimeout(r, 100));
  }
}
