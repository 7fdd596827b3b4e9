/**
 * The dashboard in a real browser: headless Chromium (Debian's `chromium`) driven by
 * playwright-core. Screenshots go to test-artifacts/screenshots/.
 */
import { expect, test } from 'bun:test';
import type { Browser, Page } from 'playwright-core';
import { SHOTS, withStackAndBrowser } from '../../test/browser';
import type { Stack } from '../../test/harness';
import { loginLink } from './dashboard-helpers';

const DESKTOP = { width: 1280, height: 800 };
const PHONE = { width: 390, height: 844 };

let s: Stack;
let browser: Browser;
withStackAndBrowser((stack, b) => {
  s = stack;
  browser = b;
});

/** The login link as an operator gets it: from the admin command line. */
async function cliLoginLink(studioId: string): Promise<string> {
  const proc = Bun.spawn(['bun', 'run', 'admin', 'login-link', '--studio', studioId], {
    cwd: new URL('../../', import.meta.url).pathname,
    env: {
      ...process.env,
      DATABASE_URL: s.config.DATABASE_URL,
      DASHBOARD_SECRET: s.config.DASHBOARD_SECRET,
      DASHBOARD_PUBLIC_URL: s.dashboardUrl,
    },
    stdout: 'pipe',
    stderr: 'pipe',
  });
  const [out, err, code] = await Promise.all([
    new Response(proc.stdout).text(),
    new Response(proc.stderr).text(),
    proc.exited,
  ]);
  if (code !== 0) throw new Error(`login-link failed: ${err}`);
  return JSON.parse(out).url;
}

/** CSP violations and script errors would show up here; the pages must produce none. */
function watchErrors(page: Page) {
  const errors: string[] = [];
  page.on('console', (m) => m.type() === 'error' && errors.push(m.text()));
  page.on('pageerror', (e) => errors.push(String(e)));
  return errors;
}

test('sign in, create a secret key, use it, find the call in the activity log, revoke it', async () => {
  const studio = await s.studio({ name: 'Lotus Yoga' });
  await s.key(studio.id, 'publishable', [], 'website');
  const context = await browser.newContext({ viewport: DESKTOP });
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: s.dashboardUrl });
  const page = await context.newPage();
  const errors = watchErrors(page);

  // Sign in with a login link from the CLI.
  await page.goto(await cliLoginLink(studio.id));
  await expect(page.locator('h1').textContent()).resolves.toBe('Sign in to Lotus Yoga');
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(`${s.dashboardUrl}/keys`);
  const cookie = (await context.cookies()).find((c) => c.name === 'dashboard_session')!;
  expect(cookie.httpOnly).toBe(true);
  expect(cookie.sameSite).toBe('Strict');

  // Create a secret key with two scopes; it is shown once, with a copy button.
  const form = page.locator('form', { has: page.getByRole('button', { name: 'Create secret key' }) });
  await form.getByLabel('Name').fill('booking-sync');
  await form.getByLabel('instructors:read').check();
  await form.getByLabel('classes:write').check();
  await form.getByRole('button', { name: 'Create secret key' }).click();
  const secret = page.locator('#new-key');
  const key = (await secret.textContent())!.trim();
  expect(key).toMatch(/^svc_sk_[0-9A-Za-z]{32}$/);
  await expect(page.locator('.warning').textContent()).resolves.toContain('it will not be shown again');
  await page.getByRole('button', { name: 'Copy' }).click();
  await expect(page.evaluate(() => navigator.clipboard.readText())).resolves.toBe(key);
  await page.screenshot({ path: `${SHOTS}keys-new-key-desktop.png`, fullPage: true });

  // Reload: the key is gone for good, only its hint remains (and nothing was posted twice).
  await page.reload();
  expect(new URL(page.url()).pathname).toBe('/keys');
  const html = await page.content();
  expect(html).not.toContain(key);
  const row = page.locator('tr', { hasText: 'booking-sync' });
  await expect(row.locator('td[data-label="Key"]').textContent()).resolves.toBe(`svc_sk_…${key.slice(-4)}`);
  await expect(row.locator('td[data-label="Access"]').textContent()).resolves.toBe('classes: write; instructors: read');
  const [count] = await s.sql`select count(*)::int as n from api_keys where studio_id = ${studio.id}`;
  expect(count!.n).toBe(2);

  // Call the Management surface with it; the call appears on the activity page within 2 s.
  const res = await s.mg('/v1/instructors', key);
  const calledAt = performance.now();
  expect(res.status).toBe(200);
  const requestId = res.headers.get('x-request-id')!;
  const entry = page.locator(`tr[data-request-id="${requestId}"]`);
  let latency = 0;
  for (;;) {
    await page.goto(`${s.dashboardUrl}/activity`);
    if (await entry.count()) break;
    latency = performance.now() - calledAt;
    if (latency > 2000) throw new Error('the call did not show up on the activity page within 2 s');
    await Bun.sleep(100);
  }
  latency = performance.now() - calledAt;
  console.log(`activity latency: the call was on the activity page ${Math.round(latency)} ms after its response`);
  expect(latency).toBeLessThan(2000);
  // the operation's summary, then its id (the id alone broke mid-word on a phone)
  await expect(entry.locator('td[data-label="Operation"] code.op-id').textContent()).resolves.toBe(
    'managementListInstructors',
  );
  await expect(entry.locator('td[data-label="Operation"] .op-name').textContent()).resolves.toBe('List instructors');
  await expect(entry.locator('td[data-label="Status"]').textContent()).resolves.toBe('200');
  await expect(entry.locator('td[data-label="Key"]').textContent()).resolves.toContain('booking-sync');
  await expect(entry.locator('td[data-label="Request"]').textContent()).resolves.toBe('GET /v1/instructors');
  // A few more entries (a refusal, an unknown route) so the screenshot shows the outcomes.
  await s.mg('/v1/classes', key);
  await s.mg('/v1/nowhere', key);
  await s.gateway.activity.flush();
  await page.goto(`${s.dashboardUrl}/activity`);
  await page.screenshot({ path: `${SHOTS}activity-desktop.png`, fullPage: true });
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: `${SHOTS}activity-phone.png`, fullPage: true });

  // The filter by outcome applies on change (JavaScript) and keeps only the refusal.
  await page.setViewportSize(DESKTOP);
  await page.getByLabel('Outcome').selectOption('client_error');
  await page.waitForURL(/outcome=client_error/);
  await expect(page.locator('tbody tr').count()).resolves.toBe(2);

  // Last used comes from the activity stream.
  await page.goto(`${s.dashboardUrl}/keys`);
  await expect(row.locator('td[data-label="Last used"] time').count()).resolves.toBe(1);
  await page.screenshot({ path: `${SHOTS}keys-desktop.png`, fullPage: true });
  await page.setViewportSize(PHONE);
  await page.screenshot({ path: `${SHOTS}keys-phone.png`, fullPage: true });
  await page.setViewportSize(DESKTOP);

  // Revoke, after the confirmation dialog; the next API call with it is refused.
  page.once('dialog', (d) => void d.accept());
  await row.getByRole('button', { name: 'Revoke' }).click();
  await page.waitForURL(/\/keys\?revoked=/);
  await expect(page.locator('.notice').textContent()).resolves.toContain('Key “booking-sync” is revoked');
  await expect(row.locator('td[data-label="Status"]').textContent()).resolves.toContain('Revoked');
  const after = await s.mg('/v1/instructors', key);
  expect(after.status).toBe(401);
  expect((await after.json()).code).toBe('api_key_revoked');

  // Sign out.
  await page.getByRole('button', { name: 'Sign out' }).click();
  await page.waitForURL(/\/sign-in/);
  await page.goto(`${s.dashboardUrl}/keys`);
  expect(new URL(page.url()).pathname).toBe('/sign-in');
  expect(errors).toEqual([]);
  await context.close();
}, 60_000);

test('a used or expired login link and a forged session cookie are refused', async () => {
  const studio = await s.studio({ name: 'Other Studio' });
  await s.key(studio.id, 'secret', ['classes:read'], 'hidden-key');
  const context = await browser.newContext({ viewport: PHONE });
  const page = await context.newPage();

  const used = await loginLink(s, studio.id);
  await page.goto(used.url);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(`${s.dashboardUrl}/keys`);
  await context.clearCookies();
  await page.goto(used.url);
  await expect(page.locator('[role=alert]').textContent()).resolves.toContain('already been used');
  await page.screenshot({ path: `${SHOTS}link-refused-phone.png`, fullPage: true });
  expect(await context.cookies()).toEqual([]);

  const expired = await loginLink(s, studio.id);
  await page.goto(expired.url); // the page is shown while the link is still valid...
  await s.sql`update login_links set expires_at = now() - interval '1 second' where id = ${expired.token.split('.')[0]!}`;
  // ...and using it after expiry is refused (the refusal is the POST's own page, at /login without the token)
  await Promise.all([
    page.waitForURL(`${s.dashboardUrl}/login`),
    page.getByRole('button', { name: 'Continue' }).click(),
  ]);
  await expect(page.locator('[role=alert]').textContent()).resolves.toContain('expired');
  expect(await context.cookies()).toEqual([]);
  await page.goto(expired.url);
  await expect(page.locator('[role=alert]').textContent()).resolves.toContain('expired');

  await context.addCookies([
    { name: 'dashboard_session', value: 'Z'.repeat(43), url: s.dashboardUrl, httpOnly: true, sameSite: 'Strict' },
  ]);
  await page.goto(`${s.dashboardUrl}/keys`);
  expect(new URL(page.url()).pathname).toBe('/sign-in');
  expect(await page.content()).not.toContain('hidden-key');
  await expect(page.locator('main').textContent()).resolves.toContain('bun run admin login-link');
  await page.screenshot({ path: `${SHOTS}sign-in-phone.png`, fullPage: true });
  await context.close();
}, 60_000);

test('without JavaScript: create a key and revoke it through the confirmation page', async () => {
  const studio = await s.studio();
  const context = await browser.newContext({ viewport: DESKTOP, javaScriptEnabled: false });
  const page = await context.newPage();
  await page.goto((await loginLink(s, studio.id)).url);
  await page.getByRole('button', { name: 'Continue' }).click();
  await page.waitForURL(`${s.dashboardUrl}/keys`);
  const form = page.locator('form', { has: page.getByRole('button', { name: 'Create secret key' }) });
  await form.getByLabel('Name').fill('no-js');
  await form.getByLabel('read-all').check();
  await Promise.all([
    page.waitForURL(`${s.dashboardUrl}/keys`),
    form.getByRole('button', { name: 'Create secret key' }).click(),
  ]);
  const key = (await page.locator('#new-key').textContent())!.trim();
  expect((await s.mg('/v1/instructors', key)).status).toBe(200);
  await page.goto(`${s.dashboardUrl}/keys`);
  // wait for the navigation the click starts, so the heading read is the confirmation page's
  await Promise.all([
    page.waitForURL(/\/keys\/key_[0-9A-Za-z]+\/revoke$/),
    page.locator('tr', { hasText: 'no-js' }).getByRole('button', { name: 'Revoke' }).click(),
  ]);
  await expect(page.locator('h1').textContent()).resolves.toBe('Revoke “no-js”?');
  expect((await s.mg('/v1/instructors', key)).status).toBe(200);
  await Promise.all([page.waitForURL(/\/keys\?revoked=/), page.getByRole('button', { name: 'Revoke key' }).click()]);
  expect((await s.mg('/v1/instructors', key)).status).toBe(401);
  await context.close();
}, 60_000);
