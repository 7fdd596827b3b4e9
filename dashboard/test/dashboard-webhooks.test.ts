/**
 * The dashboard's Webhooks page over plain HTTP: CSRF and same-origin on every form,
 * another studio's endpoint and delivery are 404, the module's refusals (SSRF rules, 16 endpoints,
 * a disabled endpoint's test) are form errors, the signing secret is shown once, a receiver's
 * hostile answer is escaped in the delivery log, and the routes are counted by name.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createEndpoint, sendTestEvent, type WebhookContext, webhookContext } from '@studio/control';
import { createDispatcher } from '@studio/management-service/webhooks';
import { privateUrlsHint, recordDeliverySetting } from '@studio/shared/webhooks';
import { type Stack, startStack } from '../../test/harness';
import { type Receiver, recordEvent, startReceiver, until } from '../../test/webhooks/helpers';
import { get, postForm, signIn } from './dashboard-helpers';

/** What a refusal the private-URL setting would lift adds: the setting's name. */
const HINT = privateUrlsHint(false);

let s: Stack;
let studioId: string;
let session: { cookie: string; csrf: string };
/** The module as the operator CLI would call it on a machine that allows local receivers (the dashboard itself does not). */
let local: WebhookContext;
let dispatcher: ReturnType<typeof createDispatcher>;
let receiver: Receiver;
const HOSTILE = '<script>alert("owned")</script><img src=x onerror="alert(1)">&amp;';
/** A public address written as an IP (no DNS on a closed network): creation checks it, nothing connects to it. */
const PUBLIC_URL = 'https://93.184.215.14/hooks'; // never delivered to: the last test checks

beforeAll(async () => {
  s = await startStack();
  studioId = (await s.studio({ name: 'Lotus Yoga', timezone: 'Europe/Berlin' })).id;
  session = await signIn(s, studioId);
  local = webhookContext(s.sql, { ...s.config, WEBHOOK_ALLOW_PRIVATE_URLS: true });
  receiver = startReceiver([{ status: 500, body: HOSTILE }], 200);
  dispatcher = createDispatcher({
    sql: s.sql,
    config: { ...s.config, WEBHOOK_ALLOW_PRIVATE_URLS: true },
    timeoutMs: 2_000,
    pollMs: 100,
    retryScheduleMs: [60_000],
  });
  dispatcher.start();
});
afterAll(async () => {
  await dispatcher?.stop();
  receiver?.stop();
  await s?.close();
});

const post = (path: string, fields: Record<string, string | string[]> = {}) =>
  postForm(s, path, { csrf: session.csrf, ...fields }, session.cookie);
const page = async (path: string) => (await get(s, path, session.cookie)).text();
const endpointCount = async (studio = studioId) =>
  (await s.sql<{ n: number }[]>`select count(*)::int as n from webhook_endpoints where studio_id = ${studio}`)[0]!.n;
const secretsIn = (html: string) => html.match(/whsec_[A-Za-z0-9+/=]+/g) ?? [];
const alertOf = (html: string) => /role="alert"[^>]*>([\s\S]*?)<\//.exec(html)?.[1] ?? '';

describe('webhooks page', () => {
  test('the nav links it; signed out it redirects to sign-in', async () => {
    const keys = await page('/keys');
    expect(keys).toMatch(/<a href="\/webhooks"\s*>Webhooks<\/a>/);
    const html = await page('/webhooks');
    expect(html).toContain('<a href="/webhooks" aria-current="page">Webhooks</a>');
    expect(html).toContain('No endpoints yet');
    const anonymous = await get(s, '/webhooks');
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.get('location')).toBe('/sign-in');
  });

  test('every form needs the CSRF token and this site: nothing is created or changed without', async () => {
    const noToken = await postForm(s, '/webhooks', { url: PUBLIC_URL }, session.cookie);
    expect(noToken.status).toBe(403);
    const wrongToken = await postForm(s, '/webhooks', { url: PUBLIC_URL, csrf: 'x'.repeat(32) }, session.cookie);
    expect(wrongToken.status).toBe(403);
    const crossSite = await postForm(s, '/webhooks', { url: PUBLIC_URL, csrf: session.csrf }, session.cookie, {
      'sec-fetch-site': 'cross-site',
    });
    expect(crossSite.status).toBe(403);
    expect(await endpointCount()).toBe(0);
    const { endpoint } = await createEndpoint(local, { studioId, url: PUBLIC_URL });
    for (const action of ['disable', 'delete', 'test', 'roll']) {
      const res = await postForm(s, `/webhooks/${endpoint.id}/${action}`, { confirm: 'yes' }, session.cookie);
      expect(`${action} ${res.status}`).toBe(`${action} 403`);
    }
    const [row] = await s.sql<{ enabled: boolean }[]>`select enabled from webhook_endpoints where id = ${endpoint.id}`;
    expect(row!.enabled).toBe(true);
    expect((await post(`/webhooks/${endpoint.id}/delete`, { confirm: 'yes' })).status).toBe(303);
  });

  test("the module's refusals are form errors at the form, keeping what was typed: private and http:// URLs, no event type, an unknown one", async () => {
    for (const [url, says] of [
      ['http://127.0.0.1:9/hooks', 'must start with https://'],
      ['https://127.0.0.1/hooks', '127.0.0.1 is not a public address'],
      ['https://10.1.2.3/hooks', '10.1.2.3 is not a public address'],
      ['https://[::1]/hooks', '::1 is not a public address'],
      // 127.0.0.1 inside IPv6 translation and tunnel prefixes
      ['https://[::ffff:0:127.0.0.1]/hooks', '::ffff:0:7f00:1 is not a public address'],
      ['https://[2002:7f00:1::]/hooks', '2002:7f00:1:: is not a public address'],
      ['https://[64:ff9b:1::7f00:1]/hooks', '64:ff9b:1::7f00:1 is not a public address'],
      ['https://[2001::80ff:fffe]/hooks', '2001::80ff:fffe is not a public address'],
      ['https://203.0.113.8:22/hooks', 'The port must be 443 (the https default) or 8443 (http://'],
      // a name: never what it resolves to (the log has it)
      [
        'https://localhost/hooks',
        'The host localhost is not a public address: it resolves to a private or reserved one (http://',
      ],
      ['not a url', 'Not a URL'],
      [`https://93.184.215.14/${'a'.repeat(2100)}`, 'at most 2048'],
    ] as const) {
      const res = await post('/webhooks', { url });
      const html = await res.text();
      expect(`${url.slice(0, 40)} ${res.status}`).toBe(`${url.slice(0, 40)} 422`);
      expect(html).toContain('role="alert"');
      expect(html).toContain(says);
      if (url.includes('localhost')) expect(alertOf(html)).not.toMatch(/127\.0\.0\.1|::1/);
      expect(html).toMatch(/name="url"[^>]*autofocus/);
    }
    const none = await post('/webhooks', { url: PUBLIC_URL, which: 'chosen' });
    expect(none.status).toBe(422);
    expect(await none.text()).toContain('Tick at least one event type');
    const unknown = await post('/webhooks', {
      url: PUBLIC_URL,
      which: 'chosen',
      event: ['class.created', 'class.exploded'],
    });
    expect(unknown.status).toBe(422);
    const html = await unknown.text();
    expect(html).toContain('Unknown event type class.exploded');
    expect(html).toMatch(/value="class\.created" data-event checked/); // the ticks are kept
    expect(html).toContain(`value="${PUBLIC_URL}"`);
    expect(await endpointCount()).toBe(0);
  });

  test('the form says where an endpoint may be as the running stack delivers (the setting its dispatchers recorded), and a refusal names the setting', async () => {
    const form = async () => {
      const html = await (await get(s, '/webhooks', session.cookie)).text();
      return /<span class="muted small" data-where>([\s\S]*?)<\/span>/.exec(html)![1]!;
    };
    try {
      await recordDeliverySetting(s.sql, true);
      expect(await form()).toContain('http:// and private addresses are allowed here');
      expect(await form()).toContain('WEBHOOK_ALLOW_PRIVATE_URLS');
      await recordDeliverySetting(s.sql, false);
      expect(await form()).toBe('(https://, reachable from the internet on port 443 or 8443)');
      const refused = await (await post('/webhooks', { url: 'http://127.0.0.1:9/hooks' })).text();
      expect(alertOf(refused)).toContain('runs with WEBHOOK_ALLOW_PRIVATE_URLS=true');
    } finally {
      await s.sql`delete from webhook_delivery_setting`;
    }
    expect(await endpointCount()).toBe(0);
  });

  test("the signing secret is shown once, on the create's own answer; chosen event types are kept", async () => {
    const res = await post('/webhooks', {
      url: PUBLIC_URL,
      which: 'chosen',
      event: ['class.cancelled', 'class.created'],
    });
    expect(res.status).toBe(201);
    const html = await res.text();
    const [secret, ...more] = secretsIn(html);
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(more).toEqual([]);
    expect(html).toContain('it will not be shown again');
    const [row] = await s.sql<
      { id: string; eventTypes: string[] }[]
    >`select id, event_types from webhook_endpoints where studio_id = ${studioId}`;
    expect(row!.eventTypes).toEqual(['class.cancelled', 'class.created']);
    expect(html).toContain(`data-reveal-return="/webhooks/${row!.id}"`);
    for (const path of ['/webhooks', `/webhooks/${row!.id}`, `/webhooks/${row!.id}/roll`])
      expect(secretsIn(await page(path))).toEqual([]);

    // a roll: a new secret, once; both sign for 24 hours, and the page says so
    const confirm = await page(`/webhooks/${row!.id}/roll`);
    expect(confirm).toContain('For 24 hours, every delivery is signed with both secrets');
    const rolled = await post(`/webhooks/${row!.id}/roll`);
    expect(rolled.status).toBe(201);
    const rolledHtml = await rolled.text();
    const [next] = secretsIn(rolledHtml);
    expect(next).toMatch(/^whsec_/);
    expect(next).not.toBe(secret);
    expect(rolledHtml).toContain('For the next 24 hours every delivery is signed with both the old and the new secret');
    const after = await page(`/webhooks/${row!.id}`);
    expect(secretsIn(after)).toEqual([]);
    expect(after).toContain('the old secret signs beside the new one until');
    expect(await page('/webhooks')).toContain('Old secret also signs until');
  });

  test('a roll form rolls once however often it is sent (a reload re-posts it): the secret before it keeps its grace', async () => {
    const { endpoint } = await createEndpoint(local, { studioId, url: `${PUBLIC_URL}/roll-twice` });
    const versions = async () =>
      (
        await s.sql<{ c: Buffer; p: Buffer | null }[]>`
        select secret_ciphertext as c, previous_secret_ciphertext as p from webhook_endpoints where id = ${endpoint.id}`
      )[0]!;
    const original = (await versions()).c;
    const from = /name="from" value="([^"]+)"/.exec(await page(`/webhooks/${endpoint.id}/roll`))![1]!;
    const first = await post(`/webhooks/${endpoint.id}/roll`, { from });
    expect(first.status).toBe(201);
    expect(secretsIn(await first.text())).toHaveLength(1);
    const again = await post(`/webhooks/${endpoint.id}/roll`, { from });
    expect(again.status).toBe(409);
    const html = await again.text();
    expect(html).toContain('This roll was sent already');
    expect(secretsIn(html)).toEqual([]);
    // the receiver's original secret still signs beside the one the first send made
    expect((await versions()).p).toEqual(original);
    // a roll asked for from a page drawn after the first one rolls again
    const next = /name="from" value="([^"]+)"/.exec(await page(`/webhooks/${endpoint.id}/roll`))![1]!;
    expect(next).not.toBe(from);
    expect((await post(`/webhooks/${endpoint.id}/roll`, { from: next })).status).toBe(201);
  });

  test('at most 16 endpoints: the 17th is a form error', async () => {
    const studio = (await s.studio({ name: 'Busy Studio' })).id;
    const busy = await signIn(s, studio);
    for (let i = 0; i < 16; i++) await createEndpoint(local, { studioId: studio, url: `${PUBLIC_URL}/${i}` });
    const res = await postForm(s, '/webhooks', { csrf: busy.csrf, url: `${PUBLIC_URL}/16` }, busy.cookie);
    expect(res.status).toBe(422);
    expect(await res.text()).toContain('A studio has at most 16 webhook endpoints; delete one first.');
    expect(await endpointCount(studio)).toBe(16);
  });

  test('a create form adds one endpoint however often it is sent (a reload re-posts it), the one that fills the studio too; a forged form id adds none', async () => {
    const studio = (await s.studio({ name: 'Twice Studio' })).id;
    const me = await signIn(s, studio);
    for (let i = 0; i < 15; i++) await createEndpoint(local, { studioId: studio, url: `${PUBLIC_URL}/${i}` });
    const once = /name="once" value="([^"]+)"/.exec(await (await get(s, '/webhooks', me.cookie)).text())![1]!;
    const send = (fields: Record<string, string>) =>
      postForm(s, '/webhooks', { csrf: me.csrf, url: `${PUBLIC_URL}/last`, ...fields }, me.cookie);
    const forged = await send({ once: `whe_${'A'.repeat(22)}.${once.split('.')[1]}` });
    expect(forged.status).toBe(422);
    expect(await forged.text()).toContain('This form is out of date');
    expect(await endpointCount(studio)).toBe(15);
    expect((await send({ once })).status).toBe(201);
    const again = await send({ once });
    expect(again.status).toBe(409);
    const html = await again.text();
    expect(html).toContain(`This form was sent already: it added ${PUBLIC_URL}/last`);
    expect(secretsIn(html)).toEqual([]);
    expect(await endpointCount(studio)).toBe(16);
  });

  test("another studio's endpoint and delivery are 404 for every page and action, and stay as they were", async () => {
    const other = (await s.studio({ name: 'Other Studio' })).id;
    // loopback where nothing listens: its test event is really attempted by the dispatcher of this file
    const { endpoint } = await createEndpoint(local, { studioId: other, url: 'http://127.0.0.1:9/other-studio' });
    const delivery = await sendTestEvent(s.sql, endpoint.id);
    expect((await get(s, `/webhooks/${endpoint.id}`, session.cookie)).status).toBe(404);
    expect((await get(s, `/webhooks/${endpoint.id}/roll`, session.cookie)).status).toBe(404);
    for (const action of ['test', 'disable', 'enable', 'roll', 'delete']) {
      const res = await post(`/webhooks/${endpoint.id}/${action}`, { confirm: 'yes' });
      expect(`${action} ${res.status}`).toBe(`${action} 404`);
    }
    expect((await post(`/webhooks/${endpoint.id}/deliveries/${delivery.id}/replay`)).status).toBe(404);
    const [row] = await s.sql<
      { enabled: boolean; updatedAt: Date; createdAt: Date }[]
    >`select enabled, updated_at, created_at from webhook_endpoints where id = ${endpoint.id}`;
    expect(row!.enabled).toBe(true);
    expect(row!.updatedAt).toEqual(row!.createdAt); // not rolled, not disabled
    const [{ n }] =
      (await s.sql`select count(*)::int as n from webhook_deliveries where endpoint_id = ${endpoint.id}`) as unknown as [
        { n: number },
      ];
    expect(n).toBe(1); // no test event sent on its behalf
    expect(await page('/webhooks')).not.toContain(endpoint.id);
  });

  test('a test event through a real receiver: its hostile answer is escaped in the log; replay; disable and enable; delete after a confirmation', async () => {
    const { endpoint } = await createEndpoint(local, { studioId, url: receiver.url });
    const sent = await post(`/webhooks/${endpoint.id}/test`);
    expect(sent.status).toBe(303);
    expect(sent.headers.get('location')).toBe(`/webhooks/${endpoint.id}?done=test`);
    expect(await page(`/webhooks/${endpoint.id}?done=test`)).toContain('A test event (webhook.test) is on its way');
    await until(() => receiver.received.length >= 1, 10_000, 'the test event');
    const attempts = async () =>
      (
        await s.sql<{ n: number }[]>`
      select count(*)::int as n from webhook_attempts a join webhook_deliveries d on d.studio_id = a.studio_id and d.id = a.delivery_id where d.endpoint_id = ${endpoint.id}`
      )[0]!.n;
    await until(async () => (await attempts()) === 1, 10_000, 'the attempt recorded');
    const log = await page(`/webhooks/${endpoint.id}`);
    expect(log).toContain('webhook.test');
    expect(log).toContain('HTTP 500');
    expect(log).not.toContain('<script>alert');
    expect(log).not.toContain('<img src=x');
    expect(log).toContain(
      '&lt;script&gt;alert(&quot;owned&quot;)&lt;/script&gt;&lt;img src=x onerror=&quot;alert(1)&quot;&gt;&amp;amp;',
    );
    const deliveryId = /data-delivery-id="(whd_[0-9A-Za-z]+)"/.exec(log)![1]!;

    // replay: attempted again at once (the schedule would wait a minute), answered 200 this time
    const replayed = await post(`/webhooks/${endpoint.id}/deliveries/${deliveryId}/replay`);
    expect(replayed.status).toBe(303);
    expect(replayed.headers.get('location')).toBe(`/webhooks/${endpoint.id}?done=replayed`);
    await until(async () => (await attempts()) === 2, 10_000, 'the replayed attempt');
    const again = await page(`/webhooks/${endpoint.id}`);
    expect(again).toContain('HTTP 200');
    expect(again).toContain('Delivered');
    expect(receiver.received.map((r) => r.headers['webhook-id'])).toEqual([
      receiver.received[0]!.headers['webhook-id']!,
      receiver.received[0]!.headers['webhook-id']!,
    ]);

    // disabled: no test event, no replay (form errors naming why), and the page says so
    expect((await post(`/webhooks/${endpoint.id}/disable`)).headers.get('location')).toBe(
      `/webhooks/${endpoint.id}?done=disabled`,
    );
    expect(await page(`/webhooks/${endpoint.id}`)).toContain('Disabled by hand.');
    const refused = await post(`/webhooks/${endpoint.id}/test`);
    expect(refused.status).toBe(422);
    // the id as it is written, not capitalised as if it began a sentence
    expect(await refused.text()).toContain(`${endpoint.id} is disabled; enable it before sending a test event.`);
    const noReplay = await post(`/webhooks/${endpoint.id}/deliveries/${deliveryId}/replay`);
    expect(noReplay.status).toBe(422);
    expect((await post(`/webhooks/${endpoint.id}/enable`)).headers.get('location')).toBe(
      `/webhooks/${endpoint.id}?done=enabled`,
    );
    expect(await page(`/webhooks/${endpoint.id}`)).toContain('<span class="status ok">Enabled</span>');

    // delete: without confirm=yes (no JavaScript) a confirmation page, and nothing deleted
    const ask = await post(`/webhooks/${endpoint.id}/delete`);
    expect(ask.status).toBe(200);
    expect(await ask.text()).toContain('Delete this endpoint?');
    expect((await s.sql`select 1 from webhook_endpoints where id = ${endpoint.id}`).length).toBe(1);
    const gone = await post(`/webhooks/${endpoint.id}/delete`, { confirm: 'yes' });
    expect(gone.headers.get('location')).toBe('/webhooks?deleted=1');
    expect(await page('/webhooks?deleted=1')).toContain('The endpoint is deleted');
    expect((await s.sql`select 1 from webhook_endpoints where id = ${endpoint.id}`).length).toBe(0);
    expect((await get(s, `/webhooks/${endpoint.id}`, session.cookie)).status).toBe(404);
  });

  test('a malformed id is no page; the routes are counted by name, never by id', async () => {
    expect((await get(s, '/webhooks/whe_bad!id', session.cookie)).status).toBe(404);
    expect((await get(s, '/webhooks/whe_ThisIsNotALabel', session.cookie)).status).toBe(404);
    expect((await get(s, '/webhooks/whe_ThisIsNotALabel/test', session.cookie)).status).toBe(405);
    expect((await post('/webhooks/whe_ThisIsNotALabel/deliveries/whd_NorThisOne/replay')).status).toBe(404);
    const text = await (await fetch(`${s.dashboardOpsUrl}/metrics`)).text();
    const lines = text.split('\n').filter((l) => l.startsWith('studio_http_requests_total{surface="dashboard"'));
    for (const route of [
      '/webhooks',
      '/webhooks/{endpointId}',
      '/webhooks/{endpointId}/test',
      '/webhooks/{endpointId}/roll',
      '/webhooks/{endpointId}/deliveries/{deliveryId}/replay',
    ]) {
      expect(`${route}: ${lines.some((l) => l.includes(`operation="${route}"`))}`).toBe(`${route}: true`);
    }
    expect(text).not.toContain('ThisIsNotALabel');
    expect(text).not.toContain('NorThisOne');
  });

  test('attempts refused at delivery: a name that resolves to a private address (never which one), a port other than 443 and 8443', async () => {
    // the dispatcher as production runs it (private addresses refused); last, so the local one is not needed again
    await dispatcher.stop();
    dispatcher = createDispatcher({ sql: s.sql, config: s.config, timeoutMs: 2_000, pollMs: 100, retryScheduleMs: [] });
    dispatcher.start();
    const other = (await s.studio({ name: 'Rebound Pilates' })).id;
    const signedIn = await signIn(s, other);
    // added where private URLs are allowed (the CLI on a developer's machine); loopback only, so nothing leaves it
    const byName = await createEndpoint(local, { studioId: other, url: 'https://localhost/hooks' });
    const byPort = await createEndpoint(local, { studioId: other, url: 'https://localhost:22/hooks' });
    await recordEvent(s.sql, other);
    await until(
      async () => (await s.sql`select 1 from webhook_attempts where studio_id = ${other}`).length === 2,
      10_000,
      'the refused attempts',
    );
    const shown = async (endpointId: string) => {
      const html = await (await get(s, `/webhooks/${endpointId}`, signedIn.cookie)).text();
      return /<p class="attempt-error small">([^<]*)<\/p>/.exec(html)?.[1];
    };
    expect(await shown(byName.endpoint.id)).toBe(
      `not sent: the host localhost is not a public address: it resolves to a private or reserved one${HINT}`,
    );
    expect(await shown(byPort.endpoint.id)).toBe(`not sent: the port must be 443 (the https default) or 8443${HINT}`);
  });

  test('nothing was sent, or even queued, to the public address the forms were checked with (a test sends only to loopback)', async () => {
    const toPublic = await s.sql<{ endpoints: number; deliveries: number; attempts: number }[]>`
      select (select count(*) from webhook_endpoints e where e.url like ${`${PUBLIC_URL}%`})::int as endpoints,
             (select count(*) from webhook_deliveries d join webhook_endpoints e
                on e.studio_id = d.studio_id and e.id = d.endpoint_id
              where e.url like ${`${PUBLIC_URL}%`})::int as deliveries,
             (select count(*) from webhook_attempts a join webhook_deliveries d
                on d.studio_id = a.studio_id and d.id = a.delivery_id
                join webhook_endpoints e on e.studio_id = d.studio_id and e.id = d.endpoint_id
              where e.url like ${`${PUBLIC_URL}%`})::int as attempts`;
    expect(toPublic[0]!.endpoints).toBeGreaterThan(0); // the forms' endpoints are there, with a dispatcher running
    expect(toPublic[0]).toMatchObject({ deliveries: 0, attempts: 0 });
  });
});
