/**
 * Test mode in Chromium at a phone's width (390 px) and a desktop's (1280 px): the header's switch turns it on; Keys,
 * Activity, Webhooks and Sandboxes then show the band across the top (visible, above the header, naming the
 * sandbox), the title says TEST MODE, and nothing overflows; a key made there is a test key; a reset from the
 * Sandboxes page, confirmed in the dialog, says it is done. Screenshots: test-artifacts/screenshots/test-mode-*.png.
 */
import { expect, test } from 'bun:test';
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

/** The band as rendered: its box, its text, and whether anything is wider than the viewport. */
const measure = (page: Page) =>
  page.evaluate(() => {
    const band = document.querySelector('.test-band');
    const box = band?.getBoundingClientRect();
    const header = document.querySelector('header.top')!.getBoundingClientRect();
    // what a reader sees: a phone's table heads are clipped away (the cells carry their labels), as is .sr-only text
    const wide = Array.from(document.querySelectorAll('body *'))
      .filter((el) => !el.closest('.sr-only') && !(window.innerWidth < 760 && el.closest('thead')))
      .filter((el) => el.getBoundingClientRect().right > window.innerWidth + 0.5)
      .map((el) => `${el.tagName.toLowerCase()}.${el.className}`);
    return {
      band: box ? { top: box.top, height: box.height, bottom: box.bottom } : null,
      text: band?.textContent ?? '',
      headerTop: header.top,
      background: getComputedStyle(band ?? document.body).backgroundColor,
      wide,
      width: document.documentElement.scrollWidth,
      viewport: window.innerWidth,
      title: document.title,
    };
  });

async function checkBand(page: Page, name: string, shot: string) {
  for (const [label, size] of Object.entries(WIDTHS)) {
    await page.setViewportSize(size);
    await page.evaluate(() => window.scrollTo(0, 0));
    const m = await measure(page);
    expect(m.band).not.toBeNull();
    expect(m.band!.top).toBe(0);
    expect(m.band!.height).toBeGreaterThan(20);
    expect(m.headerTop).toBeGreaterThanOrEqual(m.band!.bottom - 0.5); // above the header, not under it
    expect(m.text).toContain(`TEST MODE — sandbox ${name}: test data, test keys; nothing here touches live data.`);
    expect(m.background).toBe('rgb(245, 159, 0)');
    expect(m.title.startsWith('TEST MODE · ')).toBe(true);
    expect([label, shot, m.wide]).toEqual([label, shot, []]);
    expect(`${label}: ${m.width}`).toBe(`${label}: ${m.viewport}`);
    await page.screenshot({ path: `${SHOTS}test-mode-${shot}-${size.width}.png`, fullPage: true });
  }
  await page.setViewportSize(WIDTHS.desktop);
}

test('test mode: the switch, the band on every page at 390 and 1280 px, a test key, a reset', async () => {
  const studio = await s.studio({ name: 'Lotus Yoga', timezone: 'Europe/Berlin' });
  await s.key(studio.id, 'secret', ['classes:read'], 'live-sync');
  const context = await browser.newContext({ viewport: WIDTHS.desktop });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  page.on('dialog', (d) => void d.accept());
  await page.goto((await loginLink(s, studio.id)).url);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(`${s.dashboardUrl}/keys`);
  for (const size of Object.values(WIDTHS)) {
    await page.setViewportSize(size);
    expect((await measure(page)).band).toBeNull();
    await page.screenshot({ path: `${SHOTS}test-mode-off-keys-${size.width}.png` });
  }
  await page.setViewportSize(WIDTHS.desktop);

  // the switch: test mode on the default sandbox, made now; the live key is not listed
  const toggle = page.getByRole('switch', { name: 'Test mode' });
  expect(await toggle.getAttribute('aria-checked')).toBe('false');
  await toggle.click();
  await page.waitForURL(`${s.dashboardUrl}/keys`);
  expect(await page.getByRole('switch', { name: 'Test mode' }).getAttribute('aria-checked')).toBe('true');
  expect(await page.locator('table.keys').count()).toBe(0);
  expect(await page.textContent('main')).not.toContain('live-sync');

  // a test key, made with the form as a person makes it
  const secretForm = page.locator('form', { hasText: 'Create secret key' });
  await secretForm.getByLabel('Name').fill('ci-runner');
  await secretForm.locator('input[value="instructors:read"]').check();
  await secretForm.locator('input[value="sandbox:write"]').check();
  await secretForm.getByRole('button', { name: 'Create secret key' }).click();
  const key = (await page.textContent('#new-key'))!.trim();
  expect(key.startsWith('svc_sk_test_')).toBe(true);
  await page.goto(`${s.dashboardUrl}/keys`);
  await checkBand(page, 'default', 'keys');

  // a call with it is in the sandbox's activity
  const call = (await s.mg('/v1/instructors', key)).headers.get('x-request-id')!;
  await s.gateway.activity.flush();
  await page.getByRole('link', { name: 'Activity' }).click();
  await page.waitForURL(`${s.dashboardUrl}/activity`);
  expect(await page.textContent('table.activity')).toContain(call);
  await checkBand(page, 'default', 'activity');

  await page.getByRole('link', { name: 'Webhooks', exact: true }).click();
  await page.waitForURL(`${s.dashboardUrl}/webhooks`);
  await checkBand(page, 'default', 'webhooks');

  // a reset from the Sandboxes page, confirmed in the dialog
  await page.getByRole('link', { name: 'Sandboxes' }).first().click();
  await page.waitForURL(`${s.dashboardUrl}/sandboxes`);
  await page.locator('tr', { hasText: 'default' }).getByRole('button', { name: 'Reset' }).click();
  await page.waitForURL(/\/sandboxes\?reset=/);
  expect(await page.textContent('.notice')).toContain('Sandbox “default” is reset');
  await checkBand(page, 'default', 'sandboxes');

  // back to live mode: the band is gone, the live key is back
  await page.getByRole('switch', { name: 'Test mode' }).click();
  await page.waitForURL(`${s.dashboardUrl}/sandboxes`);
  await page.goto(`${s.dashboardUrl}/keys`);
  expect((await measure(page)).band).toBeNull();
  expect(await page.textContent('table.keys')).toContain('live-sync');
  expect(errors).toEqual([]);
  await context.close();
}, 120_000);
