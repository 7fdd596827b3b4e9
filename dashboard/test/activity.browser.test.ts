/**
 * The activity page in Chromium at a phone's width (390 px) and a desktop's (1280 px): the
 * chart's axis labels are readable (at least 11 px as rendered; they were 6 px on a phone),
 * an operation id wraps only at its camel-case humps, nothing overflows; and after a roll the
 * keys page tells the two same-named keys apart. Screenshots: test-artifacts/screenshots/.
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

/** What the page shows at the current width, measured as rendered. */
function measure(page: Page) {
  return page.evaluate(() => {
    const px = (el: Element) => parseFloat(getComputedStyle(el).fontSize);
    const labels = Array.from(document.querySelectorAll('.chart-x span, .chart-y span')).map((el) => ({
      text: el.textContent,
      size: px(el),
      height: el.getBoundingClientRect().height,
    }));
    // each camel-case part of an operation id (a text node between <wbr>s) on one line: no break inside a word
    const brokenWords: string[] = [];
    for (const code of Array.from(document.querySelectorAll('code.op-id'))) {
      for (const node of Array.from(code.childNodes)) {
        if (node.nodeType !== Node.TEXT_NODE) continue;
        const range = document.createRange();
        range.selectNodeContents(node);
        const lines = new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top)));
        if (lines.size > 1) brokenWords.push(node.textContent ?? '');
      }
    }
    // every word of every cell on one line (a path may break anywhere: it has no words)
    const brokenCells: string[] = [];
    for (const td of Array.from(document.querySelectorAll('table.activity td'))) {
      const walker = document.createTreeWalker(td, NodeFilter.SHOW_TEXT);
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        if (node.parentElement?.closest('.path')) continue;
        const text = node.textContent ?? '';
        for (const m of text.matchAll(/\S+/g)) {
          const range = document.createRange();
          range.setStart(node, m.index!);
          range.setEnd(node, m.index! + m[0].length);
          const lines = new Set(Array.from(range.getClientRects()).map((r) => Math.round(r.top)));
          if (lines.size > 1) brokenCells.push(`${td.getAttribute('data-label') ?? td.className}: ${m[0]}`);
        }
      }
    }
    return {
      labels,
      brokenWords,
      brokenCells: [...new Set(brokenCells)],
      width: document.documentElement.scrollWidth,
      viewport: window.innerWidth,
      ops: document.querySelectorAll('code.op-id').length,
    };
  });
}

test('activity page and chart: labels readable and ids whole at 390 and 1280 px; keys say which replaced which', async () => {
  const studio = await s.studio({ name: 'Lotus Yoga', timezone: 'Europe/Berlin' });
  const sync = await s.key(studio.id, 'secret', ['classes:read', 'instructors:read', 'members:read'], 'booking-sync');
  const web = await s.key(studio.id, 'publishable', [], 'website');
  // calls of several operations, some refused, for the list; entries over the last day for the chart
  for (const path of ['/v1/instructors', '/v1/classes', '/v1/members', '/v1/plans']) await s.mg(path, sync.key);
  for (const path of ['/v1/classes', '/v1/instructors', '/v1/config']) await s.sf(path, web.key);
  const now = Date.now();
  for (let h = 0; h < 24; h++) {
    for (let i = 0; i < (h * 7) % 11; i++) {
      s.gateway.activity.record({
        studioId: studio.id,
        keyId: sync.id,
        operationId: 'managementListRooms',
        method: 'GET',
        path: '/v1/locations/loc_x/rooms',
        status: i % 4 ? 200 : 404,
        outcome: i % 4 ? 'success' : 'client_error',
        durationMs: 3,
        requestId: `req_chart_${h}_${i}`,
        at: now - h * 3_600_000 - i * 1000,
      });
    }
  }
  await s.gateway.activity.flush();

  const context = await browser.newContext({ viewport: WIDTHS.desktop });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  await page.goto((await loginLink(s, studio.id)).url);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(`${s.dashboardUrl}/keys`);

  await page.goto(`${s.dashboardUrl}/activity`);
  for (const [label, size] of Object.entries(WIDTHS)) {
    await page.setViewportSize(size);
    const m = await measure(page);
    expect(m.labels.length).toBe(8); // six times under the bars, the scale's top and 0 beside them
    for (const l of m.labels) {
      if (l.size < 11 || l.height === 0)
        throw new Error(`${label}: axis label "${l.text}" is ${l.size} px (rendered height ${l.height})`);
    }
    expect(m.ops).toBeGreaterThan(5);
    expect(`${label}: ${m.brokenWords}`).toBe(`${label}: `);
    expect([label, m.brokenCells]).toEqual([label, []]);
    expect(`${label}: ${m.width}`).toBe(`${label}: ${m.viewport}`);
    await page.screenshot({ path: `${SHOTS}activity-${size.width}.png`, fullPage: true });
    await page.locator('.chart-card').screenshot({ path: `${SHOTS}chart-${size.width}.png` });
    // the first rows of the list as a screen shows them (the whole page is too tall to look at)
    await page.locator('table.activity').scrollIntoViewIfNeeded();
    await page.evaluate(() => document.querySelector('table.activity')!.scrollIntoView());
    await page.screenshot({ path: `${SHOTS}activity-rows-${size.width}.png` });
    await page.evaluate(() => window.scrollTo(0, 0));
  }

  // after a roll two rows share a name: each says which it is
  await page.setViewportSize(WIDTHS.desktop);
  await page.goto(`${s.dashboardUrl}/keys/${sync.id}/roll`);
  await page.getByLabel('in 24 hours').check();
  await page.getByRole('button', { name: 'Roll key' }).click();
  await page.goto(`${s.dashboardUrl}/keys`);
  const rows = page.locator('tr', { hasText: 'booking-sync' });
  expect(await rows.count()).toBe(2);
  await expect(rows.nth(0).textContent()).resolves.toContain('Replaces svc_sk_');
  await expect(rows.nth(1).textContent()).resolves.toContain('Rolled → replaced by svc_sk_');
  for (const size of Object.values(WIDTHS)) {
    await page.setViewportSize(size);
    await page.screenshot({ path: `${SHOTS}keys-rolled-${size.width}.png`, fullPage: true });
  }
  expect(errors).toEqual([]);
  await context.close();
}, 90_000);
