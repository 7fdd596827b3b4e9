/**
 * The API reference renders in headless Chromium with the network closed: every request
 * to a host other than the gateway is aborted (and recorded), as on a studio's closed
 * network. Screenshots go to test-artifacts/screenshots/docs-<surface>.png.
 */
import { expect, test } from 'bun:test';
import { EVENT_TYPES, operationsOf, type Surface, TEST_EVENT_TYPE } from '@studio/shared';
import type { Browser } from 'playwright-core';
import { SHOTS, withStackAndBrowser } from '../../test/browser';
import type { Stack } from '../../test/harness';

let s: Stack;
let browser: Browser;
withStackAndBrowser((stack, b) => {
  s = stack;
  browser = b;
});

test.each(['storefront', 'management'] as Surface[])(
  '%s /docs renders every operation from this origin alone',
  async (surface) => {
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
  },
  60_000,
);

test("Test Request sends each write with a fresh Idempotency-Key (two in a row: two 201s), and samples name the surface's kind of key", async () => {
  const studio = await s.studio();
  const { key } = await s.key(studio.id, 'secret', ['instructors:write'], 'reference');
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const sent: { idempotencyKey: string | undefined; status: number }[] = [];
  page.on('response', (r) => {
    if (r.request().method() === 'POST' && new URL(r.url()).pathname === '/v1/instructors')
      sent.push({ idempotencyKey: r.request().headers()['idempotency-key'], status: r.status() });
  });
  await page.goto(`${s.managementUrl}/docs#tag/instructors/POST/v1/instructors`);
  const section = page
    .locator('section', { hasText: 'Create an instructor' })
    .filter({ has: page.getByRole('button', { name: /Test Request/ }) })
    .first();
  await section.waitFor({ timeout: 15_000 });
  // the code samples show a secret key's form, not Scalar's YOUR_SECRET_TOKEN
  expect(await section.innerText()).toContain('Bearer svc_sk_YOUR_SECRET_KEY');
  await section
    .getByRole('button', { name: /Test Request/ })
    .first()
    .click();
  const client = page.getByRole('dialog', { name: 'API Client' });
  await client.getByRole('textbox', { name: 'Bearer Token' }).fill(key);
  const send = client.locator('[data-addressbar-action=send]:visible');
  for (let i = 1; i <= 2; i++) {
    await send.click();
    for (let t = 0; t < 100 && sent.length < i; t++) await page.waitForTimeout(50);
  }
  await page.screenshot({ path: `${SHOTS}docs-test-request.png` });
  expect(sent.map((x) => x.status)).toEqual([201, 201]);
  const uuid = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;
  expect(sent.every((x) => uuid.test(x.idempotencyKey ?? ''))).toBe(true);
  expect(sent[0]!.idempotencyKey).not.toBe(sent[1]!.idempotencyKey);
  // none of the fixed UUIDs Scalar's own {{$randomUUID}} picks from (any UUID written in its bundle)
  const bundle = await Bun.file(
    Bun.fileURLToPath(new URL('./browser/standalone.js', import.meta.resolve('@scalar/api-reference'))),
  ).text();
  const fixed = new Set(bundle.match(/[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g));
  expect(fixed.size).toBeGreaterThan(10);
  expect(sent.filter((x) => fixed.has(x.idempotencyKey!))).toEqual([]);

  const storefront = await context.newPage();
  await storefront.goto(`${s.storefrontUrl}/docs#tag/classes/GET/v1/classes`);
  const list = storefront
    .locator('section', { hasText: 'List upcoming classes' })
    .filter({ has: storefront.getByRole('button', { name: /Test Request/ }) })
    .first();
  await list.waitFor({ timeout: 15_000 });
  const sample = await list.innerText();
  expect(sample).toContain('Bearer svc_pk_YOUR_PUBLISHABLE_KEY');
  expect(sample).not.toContain('YOUR_SECRET_TOKEN');
  await context.close();
}, 60_000);

test('the Management reference shows every webhook (event type) with its body and the signature headers', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('pageerror', (err) => problems.push(String(err)));
  await page.goto(`${s.managementUrl}/docs`);
  await page.getByText('Webhooks', { exact: true }).first().waitFor({ state: 'attached', timeout: 15_000 });
  for (const type of [...EVENT_TYPES, TEST_EVENT_TYPE])
    await page.getByText(type, { exact: true }).first().waitFor({ state: 'attached', timeout: 15_000 });
  // one opened from the sidebar: its description, the three signature headers and its body's example
  await page.getByRole('link', { name: 'instructor.created' }).first().click();
  await page.waitForURL(/#webhook\/POST\/instructor\.created$/);
  const described = page.getByText('Sent when an instructor was created', { exact: false }).first();
  await described.waitFor({ timeout: 15_000 });
  const main = await page.locator('main').first().innerText();
  for (const part of ['webhook-id', 'webhook-timestamp', 'webhook-signature', '"type": "instructor.created"'])
    expect(main).toContain(part);
  await page.screenshot({ path: `${process.env.SCREENSHOTS_DIR ?? SHOTS}docs-webhooks.png` });
  await context.close();
  expect(problems).toEqual([]);
}, 60_000);
