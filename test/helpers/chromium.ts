import { chromium, type Browser, type Locator } from 'playwright-core';
import { met } from './eventually.js';
import { CHROMIUM_PATH } from './system-parts.js';

/**
 * Real headless Chromium: Debian's chromium at CHROMIUM_PATH (`apt-get install chromium`), never a
 * downloaded browser. Suites that call it are declared with describeNeeding('chromium', …).
 */
export async function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

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
  let text = '';
  await met(
    async () => {
      text =
        (await locator
          .first()
          .textContent({ timeout: 1000 })
          .catch(() => null)) ?? '';
      return test(text);
    },
    timeoutMs,
    100,
  );
  return text;
}
