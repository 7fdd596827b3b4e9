/**
 * Webhooks in a real browser: add a webhook endpoint pointing at a real receiver (a Bun.serve
 * here), see its signing secret once, send a test event and watch it arrive, verified with the
 * `standardwebhooks` package, and appear in the delivery log with the receiver's answer; replay
 * it; a real write's event delivered too; roll the secret; delete after a confirm dialog. No page
 * wider than the screen at 1280 and 390 px. Screenshots: test-artifacts/screenshots/webhooks-*.png
 * (or SCREENSHOTS_DIR).
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { createDispatcher } from '@studio/management-service/webhooks';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { launchChromium, SHOTS, WIDTHS } from '../../test/browser';
import { type Stack, startStack } from '../../test/harness';
import { type Receiver, startReceiver, until } from '../../test/webhooks/helpers';
import { loginLink } from './dashboard-helpers';

const DIR = process.env.SCREENSHOTS_DIR ?? SHOTS;

let s: Stack;
let browser: Browser;
let receiver: Receiver;
let dispatcher: ReturnType<typeof createDispatcher>;
beforeAll(async () => {
  // the receiver is on this machine: the stack allows private addresses, as for local development
  s = await startStack({ env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true' } });
  browser = await launchChromium();
  receiver = startReceiver([], { status: 200, body: '{"received":true}' });
  // the dispatcher runs in management-service processes; the harness serves the app alone, so it is started here
  dispatcher = createDispatcher({ sql: s.sql, config: s.config, pollMs: 100 });
  dispatcher.start();
});
afterAll(async () => {
  await dispatcher?.stop();
  receiver?.stop();
  await browser?.close();
  await s?.close();
});

/**
 * The page's requests and answers, as they happened (ms since the page opened): what a failure below prints. A notice
 * that did not come (twice in CI, 2026-11-29 and 2026-12-06, each a 30 s wait that said nothing) then says whether the
 * form's POST was answered, redirected, failed or never sent.
 */
function netLog(page: Page): string[] {
  const log: string[] = [];
  const t0 = Date.now();
  const at = () => String(Date.now() - t0).padStart(6);
  page.on('request', (r) => log.push(`${at()} sent ${r.method()} ${r.url()}`));
  page.on('response', (r) => log.push(`${at()} answered ${r.status()} ${r.url()}`));
  page.on('requestfailed', (r) => log.push(`${at()} failed ${r.url()}: ${r.failure()?.errorText}`));
  return log;
}

/** The notice an action's answer shows, or the refusal in its place; past 10 s, a failure that says what the page shows. */
async function noticeOf(page: Page, net: string[]): Promise<string> {
  const notice = page.locator('.notice, .error').first();
  try {
    await notice.waitFor({ timeout: 10_000 });
  } catch {
    const text = await page
      .locator('body')
      .innerText()
      .catch((err) => `(unreadable: ${err})`);
    throw new Error(
      `no notice within 10 s at ${page.url()}\nthe page's last requests:\n${net.slice(-10).join('\n')}\nthe page says: ${text.slice(0, 1500)}`,
    );
  }
  return (await notice.textContent()) ?? '';
}

async function expectNoOverflow(page: Page, what: string) {
  const [doc, viewport] = await page.evaluate(() => [document.documentElement.scrollWidth, window.innerWidth]);
  if (doc !== viewport) throw new Error(`${what}: the page is ${doc} px wide at a ${viewport} px screen`);
}

async function atBothWidths(page: Page, name: string) {
  for (const [label, size] of Object.entries(WIDTHS)) {
    await page.setViewportSize(size);
    await expectNoOverflow(page, `${name} at ${size.width} px`);
    await page.screenshot({ path: `${DIR}webhooks-${name}-${label}.png`, fullPage: true });
  }
  await page.setViewportSize(WIDTHS.desktop);
}

/** Reloads until the delivery log shows `text` (the dispatcher works in the background). */
async function reloadUntil(page: Page, text: string | RegExp, count = 1) {
  await until(
    async () => {
      await page.reload();
      const rows = page.locator('table.deliveries');
      const content = (await rows.count()) ? await rows.innerText() : '';
      const matches =
        typeof text === 'string' ? content.split(text).length - 1 : (content.match(new RegExp(text, 'g')) ?? []).length;
      return matches >= count;
    },
    15_000,
    `the delivery log to show ${text}`,
  );
}

test('add an endpoint, its secret once, a test event delivered and logged, replayed, a real event, roll, delete', async () => {
  const studio = await s.studio({ name: 'Lotus Yoga', timezone: 'Europe/Berlin' });
  const { key } = await s.key(studio.id, 'secret', ['instructors:write', 'instructors:read'], 'sync');
  const context = await browser.newContext({ viewport: WIDTHS.desktop });
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(String(e)));
  const net = netLog(page);
  await page.goto((await loginLink(s, studio.id)).url);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(`${s.dashboardUrl}/keys`);

  await page.getByRole('link', { name: 'Webhooks' }).click();
  await page.waitForURL(`${s.dashboardUrl}/webhooks`);
  await atBothWidths(page, 'empty');

  // add: ticking a type chooses "only the ones ticked" (dashboard.js)
  await page.getByLabel('Endpoint URL').fill(receiver.url);
  await page.getByRole('checkbox', { name: 'instructor.created' }).check();
  await page.getByRole('checkbox', { name: 'class.cancelled' }).check();
  expect(await page.getByRole('radio', { name: 'Only the ones ticked below' }).isChecked()).toBe(true);
  await page.getByRole('button', { name: 'Add endpoint' }).click();
  const secret = (await page.locator('#new-secret').textContent())!.trim();
  expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
  await expect(page.locator('.reveal').textContent()).resolves.toContain('it will not be shown again');
  await atBothWidths(page, 'secret-once');
  // the answer to the POST replaced its address: a reload shows the endpoint's page, without the secret
  const endpointUrl = page.url();
  expect(endpointUrl).toMatch(new RegExp(`^${s.dashboardUrl}/webhooks/whe_[0-9A-Za-z]+$`));
  await page.reload();
  expect(await page.content()).not.toContain(secret);
  await expect(page.locator('#endpoint-title').textContent()).resolves.toContain(receiver.url);

  // a test event: it arrives signed with the secret shown, and the log shows the receiver's answer
  await page.getByRole('button', { name: 'Send test event' }).click();
  // the notice, or the refusal in its place: a refusal fails here with what it says, not after a 30 s wait for a notice
  expect(await noticeOf(page, net)).toContain('A test event (webhook.test) is on its way');
  await until(() => receiver.received.length === 1, 10_000, 'the test event');
  const got = receiver.received[0]!;
  const verified = new Webhook(secret).verify(got.body, got.headers) as { type: string; id: string };
  expect(verified.type).toBe('webhook.test');
  await reloadUntil(page, 'Delivered');
  const log = await page.locator('table.deliveries').innerText();
  expect(log).toContain('webhook.test');
  expect(log).toContain(got.headers['webhook-id']!);
  expect(log).toContain('HTTP 200');
  await page.getByText('Answer (first 1 KB)').first().click();
  await expect(page.locator('pre.answer').first().textContent()).resolves.toBe('{"received":true}');
  await atBothWidths(page, 'delivery-log');

  // replay: the same webhook-id again, a second attempt in the log
  await page
    .locator('table.deliveries tr', { hasText: 'webhook.test' })
    .getByRole('button', { name: 'Replay' })
    .click();
  // as above: a refusal in the notice's place fails here, saying what it says
  expect(await noticeOf(page, net)).toContain('queued again');
  await until(() => receiver.received.length === 2, 10_000, 'the replay');
  expect(receiver.received[1]!.headers['webhook-id']).toBe(got.headers['webhook-id']);
  await reloadUntil(page, 'HTTP 200', 2);

  // a real change: the instructor created through the Management API is delivered as instructor.created
  const writtenAt = Date.now();
  const created = await s.mg('/v1/instructors', key, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
    body: JSON.stringify({ name: 'Mira Hoffmann', disciplines: ['yin'] }),
  });
  expect(created.status).toBe(201);
  const instructor = (await created.json()) as { id: string };
  await until(
    () => receiver.received.some((r) => JSON.parse(r.body).type === 'instructor.created'),
    10_000,
    'the instructor.created event',
  );
  const event = receiver.received.find((r) => JSON.parse(r.body).type === 'instructor.created')!;
  console.log(`instructor.created delivered ${event.at - writtenAt} ms after the write was sent`);
  expect(
    (new Webhook(secret).verify(event.body, event.headers) as { data: { object: { id: string } } }).data.object.id,
  ).toBe(instructor.id);
  await reloadUntil(page, 'Delivered', 2);
  expect(await page.locator('table.deliveries').innerText()).toContain('instructor.created');
  await atBothWidths(page, 'delivery-log-replayed');

  // roll: the confirmation says both secrets sign for 24 hours; the new secret is shown once
  await page.getByRole('link', { name: 'Roll secret' }).click();
  await page.waitForURL(/\/roll$/);
  await expect(page.locator('main').textContent()).resolves.toContain(
    'For 24 hours, every delivery is signed with both secrets',
  );
  await atBothWidths(page, 'roll');
  await page.getByRole('button', { name: 'Roll secret' }).click();
  const rolled = (await page.locator('#new-secret').textContent())!.trim();
  expect(rolled).toMatch(/^whsec_/);
  expect(rolled).not.toBe(secret);
  await page.goto(`${s.dashboardUrl}/webhooks`);
  await atBothWidths(page, 'list');

  // delete, after the confirm dialog
  await page.goto(endpointUrl);
  page.once('dialog', (d) => void d.accept());
  await page.getByRole('button', { name: 'Delete' }).click();
  await page.waitForURL(`${s.dashboardUrl}/webhooks?deleted=1`);
  await expect(page.locator('.notice').textContent()).resolves.toContain('The endpoint is deleted');
  expect(await page.locator('table.webhooks').count()).toBe(0);
  expect(errors).toEqual([]);
  await context.close();
}, 120_000);
