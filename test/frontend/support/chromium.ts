import { chromium, type Browser } from 'playwright-core';
import { CHROMIUM_PATH } from '../../helpers/system-parts.js';

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
