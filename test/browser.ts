/**
 * Headless Chromium for the browser tests, driven by playwright-core. Which one, in order:
 * CHROMIUM_PATH when set; else Debian's `chromium` at /usr/bin/chromium; else the headless shell that the npm package
 * `@sparticuz/chromium` ships (a devDependency, so `bun install` is all a fresh machine needs: its `executablePath()`
 * unpacks it to the temporary folder on first use). Each launch says on stderr which one it took.
 */
import { afterAll, beforeAll } from 'bun:test';
import { constants } from 'node:fs';
import { access, mkdir, stat } from 'node:fs/promises';
import { type Browser, chromium } from 'playwright-core';
import { type Stack, type StackOptions, startStack } from './harness';

/** The two widths every page is looked at: a phone's and a desktop's. */
export const WIDTHS = { phone: { width: 390, height: 844 }, desktop: { width: 1280, height: 800 } } as const;
export const SHOTS = new URL('../test-artifacts/screenshots/', import.meta.url).pathname;

const SYSTEM_CHROMIUM = '/usr/bin/chromium';

// no background connections: this machine's network is closed, and the pages must need none
const NO_NETWORK_ARGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/** A file this process may run: a present but unusable path (a package half removed, a masked binary) is passed over. */
async function runnable(path: string): Promise<boolean> {
  try {
    await access(path, constants.X_OK);
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

interface Found {
  executablePath: string;
  from: string;
}

async function findChromium(): Promise<Found> {
  const named = process.env.CHROMIUM_PATH;
  if (named) {
    if (!(await runnable(named))) throw new Error(`CHROMIUM_PATH names ${named}, which is not a program this can run`);
    return { executablePath: named, from: 'CHROMIUM_PATH' };
  }
  if (await runnable(SYSTEM_CHROMIUM)) return { executablePath: SYSTEM_CHROMIUM, from: "Debian's chromium" };
  // with our args alone, as Debian's: its README's are Lambda's (one process, no zygote, site isolation and web
  // security off), which the shell needs none of here, and which would make the pages run otherwise than in a browser
  const { default: sparticuz } = await import('@sparticuz/chromium');
  return { executablePath: await sparticuz.executablePath(), from: '@sparticuz/chromium' };
}

export async function launchChromium(): Promise<Browser> {
  await mkdir(SHOTS, { recursive: true });
  const began = performance.now();
  const { executablePath, from } = await findChromium();
  const browser = await chromium.launch({ executablePath, headless: true, args: NO_NETWORK_ARGS });
  const seconds = ((performance.now() - began) / 1000).toFixed(1);
  console.error(`browser tests: Chromium ${browser.version()} from ${from} (${executablePath}), up in ${seconds} s`);
  return browser;
}

/**
 * A browser test file's stack and Chromium: started before its tests (`ready` is given both), closed after them,
 * the browser first. Call it at the top of the file, before any hook of the file's own.
 */
export function withStackAndBrowser(ready: (stack: Stack, browser: Browser) => void, options?: StackOptions) {
  let stack: Stack | undefined;
  let browser: Browser | undefined;
  beforeAll(async () => {
    stack = await startStack(options);
    browser = await launchChromium();
    ready(stack, browser);
  });
  afterAll(async () => {
    await browser?.close();
    await stack?.close();
  });
}
