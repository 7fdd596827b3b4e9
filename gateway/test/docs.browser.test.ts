/**
 * The API reference renders in headless Chromium with the network closed: every request
 * to a host other than the gateway is aborted (and recorded), as on a studio's closed
 * network. Screenshots go to test-artifacts/screenshots/docs-<surface>.png.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Browser } from 'playwright-core';
import { launchChromium, SHOTS } from './browser';
import { operationsOf, type Surface } from '@studio/shared';
import { startStack, type Stack } from '../../test/harness';

let s: Stack;
let browser: Browser;
beforeAll(async () => {
  s = await startStack();
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await s?.close();
});

test.each(['storefront', 'management'] as Surface[])('%s /docs renders every operation from this origin alone', async (surface) => {
  const base = surface === 'storefront' ? s.storefrontUrl : s.managementUrl;
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  const elsewhere: string[] = [];
  const problems: string[] = [];
  await context.route('**/*', (route) => {
    const url = new URL(route.request().url());
    if (url.origin === base || url.protocol === 'data:' || url.protocol === 'blob:') return route.continue();
    elsewhere.push(url.href);
    return route.abort('internetdisconnected');
  });
  const page = await context.newPage();
  page.on('pageerror', (err) => problems.push(String(err)));
  page.on('console', (msg) => {
    if (msg.type() === 'error' && /Content Security Policy/i.test(msg.text())) problems.push(msg.text());
  });
  await page.goto(`${base}/`); // `/` leads to the reference
  expect(new URL(page.url()).pathname).toBe('/docs');
  // every operation of the surface, by its summary, as the reference lists them
  for (const op of operationsOf(surface)) {
    await page.getByText(op.summary, { exact: true }).first().waitFor({ state: 'attached', timeout: 15_000 });
  }
  await page.screenshot({ path: `${SHOTS}docs-${surface}.png` });
  await context.close();
  expect(elsewhere).toEqual([]);
  expect(problems).toEqual([]);
}, 60_000);
