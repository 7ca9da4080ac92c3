import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

/** Debian's chromium (`apt-get install chromium`); never a downloaded browser. */
export const CHROMIUM_PATH = process.env.ATRIUM_CHROMIUM ?? '/usr/bin/chromium';

/** Real headless Chromium. A missing browser fails the suite, naming the package to install. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(CHROMIUM_PATH))
    throw new Error(
      `Chromium not found at ${CHROMIUM_PATH}: apt-get install chromium (or set ATRIUM_CHROMIUM). .ci/run installs it.`,
    );
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
