/** The dashboard's test mode over plain HTTP: the switch, the pages on the sandbox, the Sandboxes page, tenancy. */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createEndpoint, type WebhookContext, webhookContext } from '@studio/control';
import { createSandbox, listSandboxes } from '@studio/management-service/sandboxes';
import { type Stack, startStack } from '../../test/harness';
import { csrfOf, get, postForm, signIn } from './dashboard-helpers';

let s: Stack;
let studioId: string;
let session: { cookie: string; csrf: string };
let local: WebhookContext;
const PUBLIC_URL = 'https://93.184.215.14/hooks';

beforeAll(async () => {
  s = await startStack();
  studioId = (await s.studio({ name: 'Lotus Yoga', timezone: 'Europe/Berlin' })).id;
  session = await signIn(s, studioId);
  local = webhookContext(s.sql, s.config);
});
afterAll(() => s.close());

const page = async (path: string) => (await get(s, path, session.cookie)).text();
/** A POST as the page at `from` draws it: with that page's token (a test-mode page's is bound to its sandbox). */
const postFrom = async (from: string, path: string, fields: Record<string, string | string[]> = {}) =>
  postForm(s, path, { csrf: csrfOf(await page(from)), ...fields }, session.cookie);
const switchTo = (mode: 'live' | 'test', back = 'keys') => postFrom('/keys', '/mode', { mode, back });
const sandboxesOf = (live: string) => listSandboxes(s.sql, live);
const alertOf = (html: string) => /role="alert"[^>]*>([\s\S]*?)<\//.exec(html)?.[1] ?? '';
const BAND = 'TEST MODE</strong> — sandbox <strong class="test-band-name">';

describe('the switch', () => {
  test('live mode looks as before; the first switch to test mode makes the default sandbox, shown on every page', async () => {
    const live = await page('/keys');
    expect(live).not.toContain('test-band');
    expect(live).toContain('<title>API keys · Developer settings</title>');
    expect(live).toContain('role="switch" aria-checked="false"');
    expect(live).not.toContain('href="/sandboxes"');
    expect(await sandboxesOf(studioId)).toEqual([]);

    const res = await switchTo('test', 'activity');
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/activity');
    const [sandbox] = await sandboxesOf(studioId);
    expect(sandbox!.name).toBe('default');
    for (const [path, title] of [
      ['/keys', 'API keys'],
      ['/activity', 'Activity'],
      ['/webhooks', 'Webhooks'],
      ['/sandboxes', 'Sandboxes'],
    ] as const) {
      const html = await page(path);
      expect(html).toContain(`${BAND}default</strong>: test data, test keys; nothing here touches live data.`);
      expect(html).toContain(`<title>TEST MODE · ${title} · Developer settings</title>`);
      expect(html).toContain('<body class="test-mode">');
      expect(html).toContain('role="switch" aria-checked="true"');
      expect(html).toContain(sandbox!.id); // the header names the studio the pages show
    }
    // a second switch to test mode makes no second sandbox; back to live, the band is gone
    expect((await switchTo('test')).status).toBe(303);
    expect(await sandboxesOf(studioId)).toHaveLength(1);
    expect((await switchTo('live')).status).toBe(303);
    expect(await page('/keys')).not.toContain('test-band');
  });

  test('a form drawn in one mode changes nothing once another tab switched: 409, said so', async () => {
    const liveToken = csrfOf(await page('/keys'));
    await switchTo('test');
    const before = await s.sql`select id from api_keys where studio_id = ${studioId}`;
    const res = await postForm(
      s,
      '/keys',
      { csrf: liveToken, kind: 'secret', name: 'stale', scope: 'classes:read' },
      session.cookie,
    );
    expect(res.status).toBe(409);
    expect(await res.text()).toContain('switched to test mode (sandbox default), in another tab');
    expect(await s.sql`select id from api_keys where name = 'stale'`).toHaveLength(0);
    expect(await s.sql`select id from api_keys where studio_id = ${studioId}`).toHaveLength(before.length);
    // the sign-out form and the switch take either mode's token; a made-up one is still 403
    expect((await postForm(s, '/mode', { csrf: `${liveToken}.std_x`, mode: 'test' }, session.cookie)).status).toBe(303);
    expect((await postForm(s, '/mode', { csrf: 'x'.repeat(32), mode: 'live' }, session.cookie)).status).toBe(403);
    await switchTo('live');
  });
});

describe('the pages in test mode show the sandbox', () => {
  test('keys: only the sandbox’s are listed; a created key is a test key; the picker offers sandbox:write', async () => {
    await s.key(studioId, 'secret', ['classes:read'], 'live-sync');
    await switchTo('test');
    const [sandbox] = await sandboxesOf(studioId);
    let html = await page('/keys');
    expect(html).not.toContain('live-sync');
    expect(html).toContain('value="sandbox:write"');
    expect(html).toContain('svc_sk_test_…');
    const res = await postFrom('/keys', '/keys', {
      kind: 'secret',
      name: 'ci-runner',
      scope: ['classes:read', 'sandbox:write'],
    });
    expect(res.status).toBe(201);
    html = await res.text();
    const key = /id="new-key"[^>]*>(svc_sk_test_[0-9A-Za-z]+)</.exec(html)?.[1];
    expect(key).toBeDefined();
    expect(html).toContain('Your new test secret key');
    const [row] = await s.sql<{ studioId: string; scopes: string[] }[]>`
      select studio_id, scopes from api_keys where name = 'ci-runner'`;
    expect(row).toEqual({ studioId: sandbox!.id, scopes: ['classes:read', 'sandbox:write'] });
    expect((await s.mg('/v1/classes', key!)).status).toBe(200);
    expect(await page('/keys')).toContain('classes: read; sandbox: write');

    await switchTo('live');
    html = await page('/keys');
    expect(html).toContain('live-sync');
    expect(html).not.toContain('ci-runner');
    expect(html).not.toContain('value="sandbox:write"');
  }, 30_000); // a stack's first API call takes seconds on a busy machine

  test('activity and webhooks: only the sandbox’s calls and endpoints; an endpoint added in test mode is the sandbox’s', async () => {
    await switchTo('test');
    const [sandbox] = await sandboxesOf(studioId);
    const liveKey = await s.key(studioId, 'secret', ['instructors:read'], 'live-reader');
    const testKey = await s.key(sandbox!.id, 'secret', ['instructors:read'], 'test-reader');
    const liveCall = (await s.mg('/v1/instructors', liveKey.key)).headers.get('x-request-id')!;
    const testCall = (await s.mg('/v1/instructors', testKey.key)).headers.get('x-request-id')!;
    await s.gateway.activity.flush();
    let html = await page('/activity');
    expect(html).toContain(testCall);
    expect(html).not.toContain(liveCall);
    expect((await get(s, `/activity/${liveCall}`, session.cookie)).status).toBe(404);

    await createEndpoint(local, { studioId, url: `${PUBLIC_URL}/live-only` });
    const added = await postFrom('/webhooks', '/webhooks', { url: `${PUBLIC_URL}/test-only`, all: 'yes' });
    expect(added.status).toBe(201);
    const [endpoint] = await s.sql<{ studioId: string }[]>`
      select studio_id from webhook_endpoints where url = ${`${PUBLIC_URL}/test-only`}`;
    expect(endpoint!.studioId).toBe(sandbox!.id);
    html = await page('/webhooks');
    expect(html).toContain('/test-only');
    expect(html).not.toContain('/live-only');

    await switchTo('live');
    expect(await page('/activity')).toContain(liveCall);
    expect(await page('/activity')).not.toContain(testCall);
    html = await page('/webhooks');
    expect(html).toContain('/live-only');
    expect(html).not.toContain('/test-only');
  }, 30_000);
});

describe('the Sandboxes page', () => {
  test('create, pick, rename, reset and delete; the sixth is refused with a clear message', async () => {
    await switchTo('test');
    let res = await postFrom('/sandboxes', '/sandboxes', { name: 'Not a name!' });
    expect(res.status).toBe(422);
    expect(alertOf(await res.text())).toContain('lower-case letters, digits and dashes');
    res = await postFrom('/sandboxes', '/sandboxes', { name: 'ci' });
    expect(res.status).toBe(303);
    expect(await page(res.headers.get('location')!)).toContain('Sandbox “ci” is made, with the demo data.');
    res = await postFrom('/sandboxes', '/sandboxes', { name: 'ci' }); // sent again: one sandbox
    expect(res.status).toBe(409);
    expect(alertOf(await res.text())).toContain('already');
    const ci = (await sandboxesOf(studioId)).find((b) => b.name === 'ci')!;

    // Use it: the pages show it
    res = await postFrom('/sandboxes', `/sandboxes/${ci.id}/use`);
    expect(res.status).toBe(303);
    expect(await page('/keys')).toContain(`${BAND}ci</strong>`);

    // rename (not the default)
    const defaultId = (await sandboxesOf(studioId)).find((b) => b.name === 'default')!.id;
    expect((await get(s, `/sandboxes/${defaultId}/rename`, session.cookie)).status).toBe(409);
    expect((await get(s, `/sandboxes/${ci.id}/rename`, session.cookie)).status).toBe(200);
    res = await postFrom('/sandboxes', `/sandboxes/${ci.id}/rename`, { name: 'default' });
    expect(res.status).toBe(422);
    res = await postFrom('/sandboxes', `/sandboxes/${ci.id}/rename`, { name: 'ci-nightly' });
    expect(res.status).toBe(303);
    expect(await page('/keys')).toContain(`${BAND}ci-nightly</strong>`);

    // reset: a confirmation first, then its records seeded again, its keys kept
    const testKey = await s.key(ci.id, 'secret', ['instructors:read'], 'kept');
    const count = async () =>
      (await s.sql<{ n: number }[]>`select count(*)::int as n from coupons where studio_id = ${ci.id}`)[0]!.n;
    const seeded = await count();
    expect(seeded).toBeGreaterThan(0);
    await s.sql`delete from coupons where studio_id = ${ci.id}`;
    expect(await count()).toBe(0);
    const confirm = await postFrom('/sandboxes', `/sandboxes/${ci.id}/reset`);
    expect(confirm.status).toBe(200);
    expect(await confirm.text()).toContain('name="confirm" value="yes"');
    res = await postFrom('/sandboxes', `/sandboxes/${ci.id}/reset`, { confirm: 'yes' });
    expect(res.status).toBe(303);
    expect(await page(res.headers.get('location')!)).toContain('Sandbox “ci-nightly” is reset');
    expect(await count()).toBe(seeded);
    expect((await s.mg('/v1/instructors', testKey.key)).status).toBe(200);

    // delete: not the default; the one shown, after a confirmation, and the pages fall back to the default
    expect((await postFrom('/sandboxes', `/sandboxes/${defaultId}/delete`, { confirm: 'yes' })).status).toBe(409);
    expect((await postFrom('/sandboxes', `/sandboxes/${ci.id}/delete`)).status).toBe(200);
    res = await postFrom('/sandboxes', `/sandboxes/${ci.id}/delete`, { confirm: 'yes' });
    expect(res.status).toBe(303);
    expect(await page(res.headers.get('location')!)).toContain('Sandbox “ci-nightly” is deleted');
    expect((await s.mg('/v1/instructors', testKey.key)).status).toBe(403);
    expect(await page('/keys')).toContain(`${BAND}default</strong>`);

    // five at most, the default included: the sixth is refused at the form
    for (const name of ['a', 'b', 'c', 'd'])
      expect((await postFrom('/sandboxes', '/sandboxes', { name })).status).toBe(303);
    res = await postFrom('/sandboxes', '/sandboxes', { name: 'e' });
    expect(res.status).toBe(409);
    const html = await res.text();
    expect(alertOf(html)).toContain('This studio has 5 sandboxes, the most it may have.');
    expect(html).toMatch(/name="name"[^>]*value="e"[^>]*autofocus/);
    expect(await sandboxesOf(studioId)).toHaveLength(5);
    await switchTo('live');
  });

  test("another studio's sandbox cannot be reached: 404, nothing changed, the session's row cannot point at it", async () => {
    const other = (await s.studio({ name: 'Other Studio' })).id;
    const theirs = await createSandbox(s.sql, other, 'theirs');
    const before = await s.sql`select sandbox_reset_at, sandbox_name, deleted_at from studios where id = ${theirs.id}`;
    await switchTo('test');
    for (const action of ['use', 'reset', 'delete', 'rename']) {
      const res = await postFrom('/sandboxes', `/sandboxes/${theirs.id}/${action}`, { confirm: 'yes', name: 'mine' });
      expect(`${action}: ${res.status}`).toBe(`${action}: 404`);
    }
    expect((await get(s, `/sandboxes/${theirs.id}/rename`, session.cookie)).status).toBe(404);
    expect(await s.sql`select sandbox_reset_at, sandbox_name, deleted_at from studios where id = ${theirs.id}`).toEqual(
      before,
    );
    expect(await page('/sandboxes')).not.toContain(theirs.id);
    // a session row made to name it (as a bug might) still shows only the studio's own sandboxes
    await s.sql`update dashboard_sessions set sandbox_id = ${theirs.id} where studio_id = ${studioId}`;
    const html = await page('/keys');
    expect(html).not.toContain(theirs.id);
    expect(html).toContain(`${BAND}default</strong>`);
    await switchTo('live');
  });
});
