/**
 * Keys in a real browser: roll a key, restrict a publishable key to a website and
 * watch a call from another website fail in a real page, open an activity entry from
 * its row and from a request-id search, and no page wider than the screen at 1280 and
 * 390 px. Screenshots: test-artifacts/screenshots/.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { SHOTS, WIDTHS, withStackAndBrowser } from '../../test/browser';
import type { Stack } from '../../test/harness';
import { loginLink } from './dashboard-helpers';

let s: Stack;
let browser: Browser;
withStackAndBrowser((stack, b) => {
  s = stack;
  browser = b;
});
/** Two websites on this machine: one the key allows, one it does not. */
const site = () =>
  Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    fetch: () =>
      new Response('<!doctype html><title>site</title><p>site</p>', { headers: { 'content-type': 'text/html' } }),
  });
let allowed: ReturnType<typeof site>;
let other: ReturnType<typeof site>;
beforeAll(() => {
  allowed = site();
  other = site();
});
afterAll(() => {
  allowed.stop(true);
  other.stop(true);
});

/** The page is exactly as wide as the screen: nothing overflows sideways. */
async function expectNoOverflow(page: Page, what: string) {
  const [doc, viewport] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  if (doc !== viewport) throw new Error(`${what}: the page is ${doc} px wide at a ${viewport} px screen`);
}

/** Screenshots and the overflow check at both widths. */
async function atBothWidths(page: Page, name: string) {
  for (const [label, size] of Object.entries(WIDTHS)) {
    await page.setViewportSize(size);
    await expectNoOverflow(page, `${name} at ${size.width} px`);
    await page.screenshot({ path: `${SHOTS}${name}-${label}.png`, fullPage: true });
  }
  await page.setViewportSize(WIDTHS.desktop);
}

async function signIn(page: Page, studioId: string) {
  await page.goto((await loginLink(s, studioId)).url);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(`${s.dashboardUrl}/keys`);
}

test('roll a key, restrict a website key, and open activity entries, in a browser that never overflows', async () => {
  const studio = await s.studio({ name: 'Lotus Yoga', timezone: 'Europe/Berlin' });
  const sync = await s.key(
    studio.id,
    'secret',
    ['classes:read', 'classes:write', 'instructors:read', 'members:read', 'plans:read'],
    'booking-sync with a rather long descriptive name',
  );
  const old = await s.key(studio.id, 'secret', ['instructors:read'], 'old-integration');
  await s.revoke(old.id);
  const context = await browser.newContext({ viewport: WIDTHS.desktop });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await signIn(page, studio.id);
  await atBothWidths(page, 'keys-with-revoked');

  // Roll the secret key; the old one keeps working for 24 hours.
  const row = page.locator('tr', { hasText: 'booking-sync' });
  await row.getByRole('link', { name: 'Roll' }).click();
  await page.waitForURL(/\/roll$/);
  await atBothWidths(page, 'roll-dialog');
  await page.getByLabel('in 24 hours').check();
  await page.getByRole('button', { name: 'Roll key' }).click();
  const rolled = (await page.locator('#new-key').textContent())!.trim();
  expect(rolled).toMatch(/^svc_sk_/);
  await expect(page.locator('.notice').textContent()).resolves.toContain('stops working at');
  expect((await s.mg('/v1/instructors', rolled)).status).toBe(200);
  expect((await s.mg('/v1/instructors', sync.key)).status).toBe(200); // still within its 24 hours

  // A publishable key for one website: a page on another website is refused, the allowed one is served.
  await page.goto(`${s.dashboardUrl}/keys`);
  const create = page.locator('form', { has: page.getByRole('button', { name: 'Create publishable key' }) });
  await create.getByLabel('Name').fill('website');
  await create.getByLabel('Websites that may use it').fill(`http://127.0.0.1:${allowed.port}`);
  await create.getByRole('button', { name: 'Create publishable key' }).click();
  const pk = (await page.locator('#new-key').textContent())!.trim();
  const callFrom = async (origin: string) => {
    const visitor = await context.newPage();
    await visitor.goto(`${origin}/`);
    const result = await visitor.evaluate(
      async ({ url, key }) => {
        const res = await fetch(url, { headers: { authorization: `Bearer ${key}` } });
        return { status: res.status, body: await res.json() };
      },
      { url: `${s.storefrontUrl}/v1/instructors`, key: pk },
    );
    await visitor.close();
    return result;
  };
  const good = await callFrom(`http://127.0.0.1:${allowed.port}`);
  expect(good.status).toBe(200); // readable by the page: the gateway named its origin in Access-Control-Allow-Origin
  const refused = await callFrom(`http://127.0.0.1:${other.port}`);
  expect(refused.status).toBe(403);
  expect(refused.body.code).toBe('origin_not_allowed');

  // The refused call, opened from its row on the activity page, then found by its request id.
  await s.gateway.activity.flush();
  await page.goto(`${s.dashboardUrl}/activity`);
  await atBothWidths(page, 'activity-with-chart');
  const entry = page.locator('tr', { hasText: 'origin_not_allowed' }).first();
  const requestId = (await entry.getAttribute('data-request-id'))!;
  await entry.getByRole('link').click();
  await page.waitForURL(`${s.dashboardUrl}/activity/${requestId}`);
  await expect(page.locator('dl.facts').textContent()).resolves.toContain('origin_not_allowed');
  await atBothWidths(page, 'activity-entry');
  await page.goto(`${s.dashboardUrl}/activity`);
  await page.getByLabel('Find a request by its id').fill(requestId);
  await page.getByRole('button', { name: 'Open' }).click();
  await page.waitForURL(`${s.dashboardUrl}/activity/${requestId}`);
  await expect(page.locator('h1').textContent()).resolves.toContain('/v1/instructors');
  expect(errors).toEqual([]);
  await context.close();
}, 90_000);
