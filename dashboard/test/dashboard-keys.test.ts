/** The dashboard's key actions and activity views over plain HTTP (keys, activity, their forms and CSRF). */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { escapeHtml } from '@studio/shared';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { activitySearch } from '../src/activity/queries';
import { get, postForm, signIn } from './dashboard-helpers';

let s: Stack;
let studioId: string;
let session: { cookie: string; csrf: string };
beforeAll(async () => {
  s = await startStack();
  studioId = (await s.studio({ name: 'Lotus Yoga', timezone: 'Europe/Berlin' })).id;
  session = await signIn(s, studioId);
});
afterAll(() => s.close());

const post = (path: string, fields: Record<string, string | string[]>) =>
  postForm(s, path, { csrf: session.csrf, ...fields }, session.cookie);
const page = async (path: string) => (await get(s, path, session.cookie)).text();

describe('keys', () => {
  test("the header names the studio and its id, and links each surface's docs", async () => {
    const html = await page('/keys');
    expect(html).toContain('Lotus Yoga');
    expect(html).toContain(studioId);
    expect(html).toContain(`href="${s.storefrontUrl}/docs"`);
    expect(html).toContain(`href="${s.managementUrl}/docs"`);
  });

  test('a key created with an expiry and websites; a bad origin is refused at its form, focused', async () => {
    const bad = await post('/keys', { kind: 'publishable', name: 'site', origins: 'lotus.example/shop' });
    expect(bad.status).toBe(422);
    const html = await bad.text();
    expect(html).toContain('role="alert"');
    expect(html).toContain('not an origin');
    expect(html).toMatch(/name="name"[^>]*value="site"[^>]*autofocus/);
    const ok = await post('/keys', {
      kind: 'publishable',
      name: 'site',
      origins: 'https://lotus.example\nhttps://*.lotus.example',
      expires: '7d',
    });
    expect(ok.status).toBe(201);
    const [row] = await s.sql<
      { allowedOrigins: string[]; expiresAt: Date }[]
    >`select allowed_origins, expires_at from api_keys where studio_id = ${studioId} and name = 'site'`;
    expect(row!.allowedOrigins).toEqual(['https://lotus.example', 'https://*.lotus.example']);
    expect(Math.abs(row!.expiresAt.getTime() - (Date.now() + 7 * 86_400_000))).toBeLessThan(60_000);
  });

  test('roll: a new key shown once, the old one stops at the chosen time; rename; websites edited', async () => {
    const { key: oldKey, id } = await s.key(studioId, 'secret', ['instructors:read'], 'sync');
    expect(await page(`/keys/${id}/roll`)).toContain('The old key stops working');
    const rolled = await post(`/keys/${id}/roll`, { grace: 'now' });
    expect(rolled.status).toBe(201);
    const html = await rolled.text();
    const newKey = /id="new-key"[^>]*>(svc_sk_[0-9A-Za-z]{32})</.exec(html)![1]!;
    expect(html).toContain('stops working now');
    expect((await s.mg('/v1/instructors', newKey)).status).toBe(200);
    await expectProblem(await s.mg('/v1/instructors', oldKey), 401, 'api_key_expired');

    const [next] = await s.sql<
      { id: string }[]
    >`select id from api_keys where studio_id = ${studioId} and name = 'sync' and expires_at is null`;
    expect((await post(`/keys/${next!.id}/rename`, { name: '' })).status).toBe(422);
    expect((await post(`/keys/${next!.id}/rename`, { name: 'sync v2' })).status).toBe(303);
    expect(await page('/keys')).toContain('sync v2');

    const pub = await s.key(studioId, 'publishable', [], 'embed');
    expect((await post(`/keys/${pub.id}/origins`, { origins: 'ftp://nope' })).status).toBe(422);
    expect((await post(`/keys/${pub.id}/origins`, { origins: 'https://lotus.example' })).status).toBe(303);
    await expectProblem(
      await s.sf('/v1/instructors', pub.key, { headers: { origin: 'https://evil.example' } }),
      403,
      'origin_not_allowed',
    );
    expect((await get(s, `/keys/${next!.id}/origins`, session.cookie)).status).toBe(404); // secret keys have no websites
  });

  test('a key is rolled once: the form sent again (a reload re-posts) is refused, one replacement stays, and the row offers no second Roll', async () => {
    const { id } = await s.key(studioId, 'secret', ['instructors:read'], 'twice');
    expect((await post(`/keys/${id}/roll`, { grace: 'bogus' })).status).toBe(422); // no grace chosen: the form again, saying so
    expect((await post(`/keys/${id}/roll`, { grace: '1h' })).status).toBe(201);
    const again = await post(`/keys/${id}/roll`, { grace: '1h' });
    expect(again.status).toBe(409);
    expect(await again.text()).toContain('was already rolled');
    const live = await s.sql`select id from api_keys where rolled_from = ${id} and revoked_at is null`;
    expect(live).toHaveLength(1);
    expect(await page('/keys')).not.toContain(`href="/keys/${id}/roll"`);
    // hand-made values named like what every object has are no choice at all: the form again, or no expiry
    const { id: odd } = await s.key(studioId, 'secret', ['instructors:read'], 'odd values');
    expect((await post(`/keys/${odd}/roll`, { grace: 'constructor' })).status).toBe(422);
    expect((await post('/keys', { kind: 'publishable', name: 'odd', expires: 'constructor' })).status).toBe(201);
    // a roll that stopped the old key at once, sent again: the same answer, not "no such key"
    const { id: now } = await s.key(studioId, 'secret', ['instructors:read'], 'at once');
    expect((await post(`/keys/${now}/roll`, { grace: 'now' })).status).toBe(201);
    const resent = await post(`/keys/${now}/roll`, { grace: 'now' });
    expect(resent.status).toBe(409);
    expect(await resent.text()).toContain('This key was already rolled');
  });

  test('a create form makes one key however often it is sent (a reload re-posts it); a forged form id is refused', async () => {
    const once = (html: string, kind: string) =>
      new RegExp(`name="once" value="([^"]+)">\\s*<input type="hidden" name="kind" value="${kind}">`).exec(html)![1]!;
    const fields = {
      kind: 'secret',
      name: 'sent twice',
      scope: 'instructors:read',
      once: once(await page('/keys'), 'secret'),
    };
    const first = await post('/keys', fields);
    expect(first.status).toBe(201);
    const firstHtml = await first.text();
    expect(firstHtml).toMatch(/id="new-key"[^>]*>svc_sk_/);
    const again = await post('/keys', fields);
    expect(again.status).toBe(409);
    const againHtml = await again.text();
    expect(againHtml).toContain('This form was sent already: it made the key “sent twice”');
    expect(againHtml).not.toContain('id="new-key"');
    expect(await s.sql`select id from api_keys where studio_id = ${studioId} and name = 'sent twice'`).toHaveLength(1);
    // each page draws forms with fresh ids: the same details from a new form make a new key
    expect((await post('/keys', { ...fields, once: once(firstHtml, 'secret') })).status).toBe(201);
    // an id the dashboard did not sign (or signed for another session) makes nothing
    const [id, sig] = fields.once.split('.');
    for (const forged of [`key_${'A'.repeat(22)}.${sig}`, `${id}.${'x'.repeat(sig!.length)}`, 'junk']) {
      const refused = await post('/keys', { ...fields, name: 'forged', once: forged });
      expect(refused.status).toBe(422);
      expect(await refused.text()).toContain('This form is out of date');
    }
    const other = await signIn(s, studioId);
    const elsewhere = await postForm(s, '/keys', { ...fields, name: 'forged', csrf: other.csrf }, other.cookie);
    expect(elsewhere.status).toBe(422);
    expect(await s.sql`select id from api_keys where studio_id = ${studioId} and name = 'forged'`).toHaveLength(0);
  });

  test('revoked and expired keys can be hidden; they cannot be rolled', async () => {
    const gone = await s.key(studioId, 'secret', ['classes:read'], 'gone-key');
    await s.revoke(gone.id);
    expect(await page('/keys')).toContain('gone-key');
    const hidden = await page('/keys?hide=inactive');
    expect(hidden).not.toContain('gone-key');
    expect(hidden).toContain('Show ');
    expect((await post(`/keys/${gone.id}/roll`, { grace: 'now' })).status).toBe(404);
  });

  test('scopes are summarised; all of them read "all"', async () => {
    await post('/keys', { kind: 'secret', name: 'everything', all: ['read', 'write'] });
    const html = await page('/keys');
    const row = html.slice(html.indexOf('everything'));
    expect(row.slice(0, row.indexOf('</tr>'))).toContain('<span class="scopes-summary">all</span>');
  });
});

describe('activity', () => {
  let key: string;
  beforeAll(async () => {
    key = (await s.key(studioId, 'secret', ['instructors:read'], 'reader')).key;
  });

  test('an entry opens from its row and from a request-id search, with problem code and detail, query, trace, caller and local time', async () => {
    const userAgent = 'LotusSync/2.1 (booking bridge)';
    const res = await s.mg('/v1/instructors?cursor=bad', key, {
      headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'user-agent': userAgent },
    });
    const requestId = res.headers.get('x-request-id')!;
    const { detail: problemDetail } = await res.json();
    await s.gateway.activity.flush();
    const list = await page('/activity');
    expect(list).toContain(`href="/activity/${requestId}"`);
    const search = await get(s, `/activity?requestId=${requestId}`, session.cookie);
    expect(search.status).toBe(303);
    expect(search.headers.get('location')).toBe(`/activity/${requestId}`);
    // the search form's older parameter name still finds it
    expect((await get(s, `/activity?request=${requestId}`, session.cookie)).headers.get('location')).toBe(
      `/activity/${requestId}`,
    );
    const detail = await page(`/activity/${requestId}`);
    for (const part of [
      'invalid_cursor',
      escapeHtml(problemDetail),
      'cursor=bad',
      '4bf92f3577b34da6a3ce929d0e0e4736',
      'managementListInstructors',
      'reader',
      `${s.managementUrl}/docs/problems#invalid_cursor`,
      '<code>127.0.0.1</code>',
      escapeHtml(userAgent),
    ]) {
      expect(detail).toContain(part);
    }
    // a refusal made by the gateway keeps its detail too
    const refused = await s.mg('/v1/classes', key);
    const refusedId = refused.headers.get('x-request-id')!;
    const refusal = (await refused.json()) as { code: string; detail: string };
    expect(refusal.code).toBe('scope_required');
    await s.gateway.activity.flush();
    expect(await page(`/activity/${refusedId}`)).toContain(escapeHtml(refusal.detail));
    expect(detail).toMatch(
      /<time datetime="[^"]+" title="\d{4}-\d\d-\d\d \d\d:\d\d:\d\d Europe\/Berlin">\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC<\/time>/,
    );
    const missing = await get(s, '/activity?requestId=req_nothing', session.cookie);
    expect(missing.status).toBe(404);
    const missingPage = await missing.text();
    expect(missingPage).toContain('No entry of this studio has the request id');
    // a 429 folded into another entry has no entry of its own: the page says so rather than deny the call happened
    expect(missingPage).toContain('Calls refused with 429 are kept as one entry per key, address and second');
    // an id of the same millisecond that no call had (another counter) finds nothing either
    const sibling = requestId.slice(0, -1) + (requestId.endsWith('0') ? '1' : '0');
    expect((await get(s, `/activity?requestId=${sibling}`, session.cookie)).status).toBe(404);
    expect((await get(s, `/activity/${sibling}`, session.cookie)).status).toBe(404);
  });

  test('a date range keeps only its days; the chart counts calls and errors per hour and per day', async () => {
    const [k] = await s.sql<
      { id: string }[]
    >`select id from api_keys where studio_id = ${studioId} and name = 'reader'`;
    const entry = (requestId: string, at: Date, status: number) => ({
      studioId,
      keyId: k!.id,
      operationId: 'managementListInstructors',
      method: 'GET',
      path: '/v1/instructors',
      status,
      outcome: status < 400 ? ('success' as const) : ('client_error' as const),
      durationMs: 1,
      requestId,
      at: at.getTime(),
    });
    s.gateway.activity.record(entry('req_old_day', new Date('2026-01-10T12:00:00Z'), 200));
    s.gateway.activity.record(entry('req_next_day', new Date('2026-01-11T09:00:00Z'), 200));
    await s.gateway.activity.flush();
    const day = await page('/activity?from=2026-01-10&to=2026-01-10');
    expect(day).toContain('req_old_day');
    expect(day).not.toContain('req_next_day');
    // an id made before ids carried the time is still found (migration 00017 keeps an index of the batches holding one)
    const old = await get(s, '/activity?requestId=req_old_day', session.cookie);
    expect(old.headers.get('location')).toBe('/activity/req_old_day');
    expect(await page('/activity/req_old_day')).toContain('2026-01-10 12:00:00 UTC');
    const chart = await page('/activity');
    expect(chart).toMatch(/<svg class="chart"/);
    expect(chart).toMatch(/<desc id="chart-desc">\d+ calls, [1-9]\d* errors/);
    expect(await page('/activity?chart=30d')).toContain('per day, last 30 days');
    // the operation filter is grouped by resource, with readable names
    expect(chart).toContain('<optgroup label="Instructors">');
    expect(chart).toContain('Management: List instructors');
  });

  test('a search the log cannot narrow, which takes too long, asks for a narrower range instead of reading on', async () => {
    const st = await s.studio({ name: 'Busy' });
    const { id: keyId } = await s.key(st.id, 'secret', ['instructors:read'], 'busy');
    const { cookie } = await signIn(s, st.id);
    // 200,000 successful calls in the last day: a search for server errors reads every one of them
    // as the gateway writes them: a batch a minute (150 calls each)
    await s.sql`
      insert into activity_batches (studio_id, key_id, first_at, last_at, at, operation_id, method, path, status,
        duration_ms, request_id, problem_code, trace_id, query, problem_detail, client_address, user_agent, refused_count)
      select ${st.id}, ${keyId}, min(at), max(at), array_agg(at), array_agg('managementListInstructors'::text), array_agg('GET'::text),
             array_agg('/v1/instructors'::text), array_agg(200::smallint), array_agg(1::real), array_agg('req_busy' || g),
             array_agg(null::text), array_agg(null::text), array_agg(null::text), array_agg(null::text),
             array_agg(null::text), array_agg(null::text), array_agg(null::int)
      from (select g, now() - g * interval '400 milliseconds' as at from generate_series(1, 200000) g) c
      group by date_trunc('minute', at, 'UTC')`;
    activitySearch.timeoutMs = 20;
    try {
      const slow = await get(s, '/activity?outcome=server_error', cookie);
      expect(slow.status).toBe(200);
      expect(await slow.text()).toContain('Narrow the search: choose dates (From, To) or a key.');
      // the same filter over a day with nothing in it is quick, and says so
      const narrow = await (
        await get(s, '/activity?outcome=server_error&from=2026-01-01&to=2026-01-01', cookie)
      ).text();
      expect(narrow).toContain('No calls match these filters.');
    } finally {
      activitySearch.timeoutMs = 2_000;
    }
  });
});
