/** Headless Chromium (Debian's `chromium`, or CHROMIUM_PATH) for the browser tests, driven by playwright-core. */
import { mkdir } from 'node:fs/promises';
import { type Browser, chromium } from 'playwright-core';

export const SHOTS = new URL('../test-artifacts/screenshots/', import.meta.url).pathname;

export async function launchChromium(): Promise<Browser> {
  await mkdir(SHOTS, { recursive: true });
  const executablePath = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
  if (!(await Bun.file(executablePath).exists())) {
    throw new Error(
      `the browser tests need Chromium at ${executablePath}: apt-get install -y chromium (or set CHROMIUM_PATH)`,
    );
  }
  return chromium.launch({
    executablePath,
    headless: true,
    // no background connections: this machine's network is closed, and the pages must need none
    args: [
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
