/** The dashboard's security rules and pages over plain HTTP (the browser journey is in dashboard.browser.test.ts). */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createSql, readinessCheck } from '@studio/shared/io';
import { ActivityWriter, outcomeOf } from '../../gateway/src/activity/writer';
import { type Stack, startStack } from '../../test/harness';
import { PAGE_SIZE, pageRoundQuery } from '../src/activity/queries';
import { createDashboard } from '../src/app';
import { csrfOf, get, keyCount, loginLink, postForm, signIn, useLink } from './dashboard-helpers';

let s: Stack;
beforeAll(async () => (s = await startStack()));
afterAll(() => s.close());

describe('sign-in', () => {
  test('a login link shows the studio, and its POST sets an HttpOnly SameSite=Strict session cookie', async () => {
    const studio = await s.studio({ name: 'Lotus Yoga' });
    const { url, token } = await loginLink(s, studio.id);
    expect(url.startsWith(`${s.dashboardUrl}/login?token=`)).toBe(true);
    const landing = await get(s, `/login?token=${token}`);
    expect(landing.status).toBe(200);
    expect(await landing.text()).toContain('Sign in to Lotus Yoga');
    const [res] = (await useLink(s, token)) as [Response];
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/keys');
    const cookie = res.headers.get('set-cookie')!;
    expect(cookie).toMatch(/^dashboard_session=[0-9A-Za-z]{43}; /);
    expect(cookie).toContain('HttpOnly');
    expect(cookie).toContain('SameSite=Strict');
    expect(cookie).toContain('Path=/');
    const keys = await get(s, '/keys', cookie.split(';')[0]);
    expect(keys.status).toBe(200);
    expect(await keys.text()).toContain('Lotus Yoga');
    // Only a hash of the cookie value is stored.
    const [row] = await s.sql`select id from dashboard_sessions where studio_id = ${studio.id}`;
    expect(row!.id).not.toBe(cookie.split(';')[0]!.split('=')[1]);
  });

  test('a used login link is refused, on its page and on its POST', async () => {
    const studio = await s.studio();
    const { token } = await loginLink(s, studio.id);
    expect((await useLink(s, token))[0]!.status).toBe(303);
    const again = await postForm(s, '/login', { token });
    expect(again.status).toBe(410);
    expect(again.headers.get('set-cookie') ?? '').not.toContain('dashboard_session'); // no session: only the link page's proof taken back
    expect(await again.text()).toContain('already been used');
    const page = await get(s, `/login?token=${token}`);
    expect(page.status).toBe(410);
  });

  test('the same link used twice at once signs in only once', async () => {
    const studio = await s.studio();
    const { token } = await loginLink(s, studio.id);
    const results = await useLink(s, token, 5);
    expect(results.filter((r) => r.status === 303)).toHaveLength(1);
  });

  test('a valid link sent from anywhere but its own page is refused (login CSRF), and stays unused', async () => {
    const studio = await s.studio();
    const { token } = await loginLink(s, studio.id);
    // what a page of another site can send where the browser gives no Sec-Fetch-Site: Origin null, no proof
    for (const [fields, cookie] of [
      [{ token }, undefined],
      [{ token, nonce: 'guessed' }, undefined],
      [{ token, nonce: 'guessed' }, 'dashboard_login=other'],
      // as many characters as the cookie, more bytes: refused, not a 500
      [{ token, nonce: `${'a'.repeat(31)}é` }, `dashboard_login=${'a'.repeat(32)}`],
    ] as const) {
      const res = await postForm(s, '/login', fields, cookie, { origin: 'null' });
      expect(res.status).toBe(403);
      expect(res.headers.get('set-cookie')).toBeNull();
      expect(await res.text()).toContain('Open the sign-in link again');
    }
    // its own page's form still signs in, once, and clears the proof
    const [ok] = (await useLink(s, token)) as [Response];
    expect(ok.status).toBe(303);
    expect(ok.headers.getSetCookie().some((c) => c.startsWith('dashboard_login=;'))).toBe(true);
    const landing = await get(s, `/login?token=${token}`);
    expect(landing.status).toBe(410);
  });

  test('an expired login link is refused', async () => {
    const studio = await s.studio();
    const { token } = await loginLink(s, studio.id);
    await s.sql`update login_links set expires_at = now() - interval '1 second' where id = ${token.split('.')[0]!}`;
    const res = await postForm(s, '/login', { token });
    expect(res.status).toBe(410);
    expect(res.headers.get('set-cookie') ?? '').not.toContain('dashboard_session');
    expect(await res.text()).toContain('expired');
  });

  test('a link with a forged signature or of a made-up id is refused', async () => {
    const studio = await s.studio();
    const { token } = await loginLink(s, studio.id);
    const [id, mac] = token.split('.') as [string, string];
    const flipped = `${id}.${mac.slice(0, -1)}${mac.endsWith('A') ? 'B' : 'A'}`;
    for (const t of [flipped, `${'x'.repeat(24)}.${mac}`, 'nonsense', '']) {
      const res = await postForm(s, '/login', { token: t });
      expect(res.status).toBe(400);
      expect(res.headers.get('set-cookie') ?? '').not.toContain('dashboard_session');
    }
    // The real link is still unused.
    expect((await useLink(s, token))[0]!.status).toBe(303);
  });

  test('without a session every page redirects to a sign-in page that explains login links', async () => {
    for (const path of ['/', '/keys', '/activity']) {
      const res = await get(s, path);
      expect(res.status).toBe(303);
      expect(res.headers.get('location')).toBe(path === '/' ? '/keys' : '/sign-in');
    }
    const signin = await get(s, '/sign-in');
    expect(await signin.text()).toContain('bun run admin login-link --studio');
  });

  test('a forged session cookie is refused: no page, no action', async () => {
    const studio = await s.studio();
    const { csrf } = await signIn(s, studio.id);
    const forged = `dashboard_session=${'A'.repeat(43)}`;
    const res = await get(s, '/keys', forged);
    expect(res.status).toBe(303);
    expect(res.headers.get('location')).toBe('/sign-in');
    const post = await postForm(s, '/keys', { csrf, kind: 'publishable', name: 'sneaky' }, forged);
    expect(post.status).toBe(303);
    expect(await keyCount(s, studio.id)).toBe(0);
  });

  test('sign-out deletes the session: the old cookie no longer works', async () => {
    const studio = await s.studio();
    const { cookie, csrf } = await signIn(s, studio.id);
    const out = await postForm(s, '/logout', { csrf }, cookie);
    expect(out.status).toBe(303);
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
    expect((await get(s, '/keys', cookie)).status).toBe(303);
    const [row] = await s.sql`select count(*)::int as n from dashboard_sessions where studio_id = ${studio.id}`;
    expect(row!.n).toBe(0);
  });

  test('an expired session is refused', async () => {
    const studio = await s.studio();
    const { cookie } = await signIn(s, studio.id);
    await s.sql`update dashboard_sessions set expires_at = now() - interval '1 second' where studio_id = ${studio.id}`;
    expect((await get(s, '/keys', cookie)).status).toBe(303);
  });
});

describe('forms', () => {
  test('a POST with a missing or wrong CSRF token is refused and changes nothing', async () => {
    const studio = await s.studio();
    const { cookie, csrf } = await signIn(s, studio.id);
    const missing = await postForm(s, '/keys', { kind: 'publishable', name: 'x' }, cookie);
    expect(missing.status).toBe(403);
    const wrong = await postForm(
      s,
      '/keys',
      { csrf: csrf.slice(0, -1) + (csrf.endsWith('a') ? 'b' : 'a'), kind: 'publishable', name: 'x' },
      cookie,
    );
    expect(wrong.status).toBe(403);
    const { key, id } = await s.key(studio.id, 'secret', ['instructors:read']);
    const revoke = await postForm(s, `/keys/${id}/revoke`, { confirm: 'yes' }, cookie);
    expect(revoke.status).toBe(403);
    const logout = await postForm(s, '/logout', {}, cookie);
    expect(logout.status).toBe(403);
    expect(await keyCount(s, studio.id)).toBe(1);
    expect((await s.mg('/v1/instructors', key)).status).toBe(200);
    expect((await get(s, '/keys', cookie)).status).toBe(200);
  });

  test("another session's CSRF token does not work", async () => {
    const studio = await s.studio();
    const a = await signIn(s, studio.id);
    const b = await signIn(s, studio.id);
    expect(a.csrf).not.toBe(b.csrf);
    expect((await postForm(s, '/keys', { csrf: b.csrf, kind: 'publishable', name: 'x' }, a.cookie)).status).toBe(403);
  });

  test('a POST from another origin is refused even with the right token', async () => {
    const studio = await s.studio();
    const { cookie, csrf } = await signIn(s, studio.id);
    for (const headers of [
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
      { 'sec-fetch-site': 'same-site' },
    ] as Record<string, string>[]) {
      const res = await postForm(s, '/keys', { csrf, kind: 'publishable', name: 'x' }, cookie, headers);
      expect(res.status).toBe(403);
    }
    const { token } = await loginLink(s, studio.id);
    expect((await postForm(s, '/login', { token }, undefined, { 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect(await keyCount(s, studio.id)).toBe(0);
  });

  test('a form is read bounded however it is framed: chunked past 64 KiB is 413, even signed out, before it is all read', async () => {
    let sent = 0;
    const chunk = new TextEncoder().encode(`token=${'a'.repeat(16 * 1024)}`);
    const body = new ReadableStream<Uint8Array>({
      pull(c) {
        // 4 MiB on offer; a bounded reader stops taking it at 64 KiB
        if (sent >= 4 * 1024 * 1024) return c.close();
        sent += chunk.byteLength;
        c.enqueue(chunk);
      },
    });
    const res = await fetch(`${s.dashboardUrl}/login`, {
      method: 'POST',
      redirect: 'manual',
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: s.dashboardUrl },
      body,
    });
    expect(res.status).toBe(413);
    expect(await res.text()).toContain('That form was too large.');
    expect(sent).toBeLessThan(4 * 1024 * 1024);
  });

  test('every response carries the security headers', async () => {
    const studio = await s.studio();
    const { cookie } = await signIn(s, studio.id);
    for (const res of [await get(s, '/keys', cookie), await get(s, '/sign-in'), await get(s, '/nope')]) {
      expect(res.headers.get('content-security-policy')).toContain("script-src 'self'");
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
      expect(res.headers.get('x-frame-options')).toBe('DENY');
      expect(res.headers.get('referrer-policy')).toBe('no-referrer');
      expect(res.headers.get('x-content-type-options')).toBe('nosniff');
    }
    expect((await get(s, '/nope')).status).toBe(404);
    expect((await get(s, '/keys', cookie)).headers.get('cache-control')).toBe('no-store');
    const js = await get(s, '/assets/dashboard.js');
    expect(js.status).toBe(200);
    expect(js.headers.get('content-type')).toContain('javascript');
  });
});

describe('keys', () => {
  test('create a secret key: shown once on the POST response, never again; the list shows the hint', async () => {
    const studio = await s.studio();
    const { cookie, csrf } = await signIn(s, studio.id);
    const res = await postForm(
      s,
      '/keys',
      { csrf, kind: 'secret', name: 'sync', scope: ['instructors:read', 'classes:write'] },
      cookie,
    );
    expect(res.status).toBe(201);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const body = await res.text();
    const key = /id="new-key" class="secret">(svc_sk_[0-9A-Za-z]{32})</.exec(body)?.[1];
    expect(key).toBeDefined();
    expect(body).toContain('will not be shown again');
    const [row] = await s.sql<
      { scopes: string[]; hint: string }[]
    >`select scopes, hint from api_keys where studio_id = ${studio.id}`;
    expect(row!.scopes).toEqual(['classes:write', 'instructors:read']);
    const list = await (await get(s, '/keys', cookie)).text();
    expect(list).not.toContain(key!);
    expect(list).toContain(row!.hint);
    expect((await s.mg('/v1/instructors', key!)).status).toBe(200);
  });

  test('the read-all shortcut gives every read scope; a publishable key gets none', async () => {
    const studio = await s.studio();
    const { cookie, csrf } = await signIn(s, studio.id);
    expect((await postForm(s, '/keys', { csrf, kind: 'secret', name: 'reader', all: 'read' }, cookie)).status).toBe(
      201,
    );
    expect(
      (await postForm(s, '/keys', { csrf, kind: 'publishable', name: 'site', scope: 'classes:write' }, cookie)).status,
    ).toBe(201);
    const rows = await s.sql<
      { kind: string; scopes: string[] }[]
    >`select kind, scopes from api_keys where studio_id = ${studio.id} order by kind`;
    expect(rows[0]!.kind).toBe('publishable');
    expect(rows[0]!.scopes).toEqual([]);
    expect(rows[1]!.scopes).toHaveLength(9);
    expect(rows[1]!.scopes.every((x) => x.endsWith(':read'))).toBe(true);
  });

  test('bad create input re-shows the form with a message and creates nothing', async () => {
    const studio = await s.studio();
    const { cookie, csrf } = await signIn(s, studio.id);
    const cases: Record<string, string>[] = [
      { csrf, kind: 'secret', name: 'no scopes' },
      { csrf, kind: 'secret', name: '   ', scope: 'classes:read' },
      { csrf, kind: 'secret', name: 'x'.repeat(101), scope: 'classes:read' },
      { csrf, kind: 'secret', name: 'bogus', scope: 'root:everything' },
      { csrf, kind: 'admin', name: 'no such kind', scope: 'classes:read' },
    ];
    for (const fields of cases) {
      const res = await postForm(s, '/keys', fields, cookie);
      expect(res.status).toBe(422);
      expect(await res.text()).toContain('role="alert"');
    }
    expect(await keyCount(s, studio.id)).toBe(0);
  });

  test('key names are escaped', async () => {
    const studio = await s.studio();
    const { cookie, csrf } = await signIn(s, studio.id);
    await postForm(s, '/keys', { csrf, kind: 'publishable', name: '<script>alert("x")</script>' }, cookie);
    const page = await (await get(s, '/keys', cookie)).text();
    expect(page).not.toContain('<script>alert');
    expect(page).toContain('&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt;');
  });

  test('revoke asks first (no JavaScript), then refuses the key at once', async () => {
    const studio = await s.studio();
    const { cookie, csrf } = await signIn(s, studio.id);
    const { key, id } = await s.key(studio.id, 'secret', ['instructors:read'], 'to revoke');
    const ask = await postForm(s, `/keys/${id}/revoke`, { csrf }, cookie);
    expect(ask.status).toBe(200);
    expect(await ask.text()).toContain('Revoke “to revoke”?');
    expect((await s.mg('/v1/instructors', key)).status).toBe(200);
    const done = await postForm(s, `/keys/${id}/revoke`, { csrf, confirm: 'yes' }, cookie);
    expect(done.status).toBe(303);
    expect(done.headers.get('location')).toBe(`/keys?revoked=${id}`);
    expect((await s.mg('/v1/instructors', key)).status).toBe(401);
    const page = await (await get(s, `/keys?revoked=${id}`, cookie)).text();
    expect(page).toContain('Key “to revoke” is revoked');
  });

  test("a session cannot revoke or see another studio's keys", async () => {
    const mine = await s.studio();
    const theirs = await s.studio();
    const { cookie, csrf } = await signIn(s, mine.id);
    const other = await s.key(theirs.id, 'secret', ['instructors:read'], 'their-secret-key-name');
    const res = await postForm(s, `/keys/${other.id}/revoke`, { csrf, confirm: 'yes' }, cookie);
    expect(res.status).toBe(404);
    const [row] = await s.sql`select revoked_at from api_keys where id = ${other.id}`;
    expect(row!.revokedAt).toBeNull();
    expect((await s.mg('/v1/instructors', other.key)).status).toBe(200);
    await s.gateway.activity.flush();
    for (const path of ['/keys', '/activity', `/activity?key=${other.id}`]) {
      const page = await (await get(s, path, cookie)).text();
      expect(page).not.toContain('their-secret-key-name');
      expect(page).not.toContain('/v1/instructors');
    }
  });
});

test("a dashboard answer carries traceresponse: the caller's trace continued, or one started", async () => {
  const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
  const continued = await fetch(`${s.dashboardUrl}/sign-in`, {
    headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
  });
  expect(continued.headers.get('traceresponse')).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
  const started = await fetch(`${s.dashboardUrl}/sign-in`);
  expect(started.headers.get('traceresponse')).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-0[01]$/);
});

describe('the database away', () => {
  test('a page is 503 with Retry-After, saying so, not a 500', async () => {
    const studio = await s.studio();
    const { cookie } = await signIn(s, studio.id);
    // the same dashboard over a Postgres that refuses connections (nothing listens on port 1)
    const dead = createSql('postgres://postgres@127.0.0.1:1/studio', { max: 1 });
    const dashboard = createDashboard({
      config: s.config,
      sql: dead,
      readiness: readinessCheck(dead, 'none'),
      bus: s.bus,
    });
    try {
      const res = await dashboard(new Request(`${s.dashboardUrl}/keys`, { headers: { cookie } }));
      expect(res.status).toBe(503);
      expect(res.headers.get('retry-after')).toBe('1');
      expect(await res.text()).toContain('cannot reach its database just now');
      // a session cookie this gateway did not make is refused before the database is asked (it is not even reached)
      const forged = await dashboard(
        new Request(`${s.dashboardUrl}/keys`, { headers: { cookie: `dashboard_session=${'A'.repeat(43)}` } }),
      );
      expect(forged.status).toBe(303);
      expect(forged.headers.get('location')).toBe('/sign-in');
    } finally {
      await dead.end({ timeout: 1 });
    }
  });
});

describe('activity', () => {
  test('date filters at the ends of the calendar are clamped, and a day that does not exist is dropped, never a 500', async () => {
    const studio = await s.studio();
    const k = await s.key(studio.id, 'secret', ['instructors:read'], 'dated');
    await s.sql`insert into activity ${s.sql({
      studioId: studio.id,
      keyId: k.id,
      operationId: 'managementListInstructors',
      method: 'GET',
      path: '/v1/instructors',
      status: 200,
      outcome: 'success',
      durationMs: 1,
      requestId: 'req_test_dated',
      at: new Date(),
    })}`;
    const { cookie } = await signIn(s, studio.id);
    for (const q of ['to=9999-12-31', 'from=0000-01-01', 'from=0000-01-01&to=9999-12-31', 'from=2026-02-30']) {
      const res = await get(s, `/activity?${q}`, cookie);
      const page = await res.text();
      expect([q, res.status, page.includes('req_test_dated')]).toEqual([q, 200, true]);
    }
    // what the filter shows is what it applied: the clamped day, and none for a day that is not one
    expect(await (await get(s, '/activity?from=0000-01-01', cookie)).text()).toContain(
      'name="from" value="1970-01-01"',
    );
    expect(await (await get(s, '/activity?from=2026-02-30', cookie)).text()).toContain('name="from" value=""');
  });

  test('newest first, 50 a page with a next link; filters by key, operation and outcome', async () => {
    const studio = await s.studio();
    const a = await s.key(studio.id, 'secret', ['instructors:read'], 'alpha');
    const b = await s.key(studio.id, 'secret', ['instructors:read'], 'beta');
    const t0 = Date.now() - 3600_000;
    // 120 entries a second apart: every 3rd by beta, every 10th a 500, every 7th an unknown route.
    await s.sql`insert into activity ${s.sql(
      Array.from({ length: 120 }, (_, i) => ({
        studioId: studio.id,
        keyId: i % 3 === 0 ? b.id : a.id,
        operationId: i % 7 === 0 ? null : 'managementListInstructors',
        method: 'GET',
        path: i % 7 === 0 ? '/v1/nowhere' : '/v1/instructors',
        status: i % 10 === 0 ? 500 : 200,
        outcome: i % 10 === 0 ? 'server_error' : 'success',
        durationMs: 1.5,
        requestId: `req_test_${i}`,
        at: new Date(t0 + i * 1000),
      })),
    )}`;
    const { cookie } = await signIn(s, studio.id);
    const ids = (page: string) => [...page.matchAll(/data-request-id="req_test_(\d+)"/g)].map((m) => Number(m[1]));
    const next = (page: string) =>
      /href="\/activity\?([^"]*)"[^>]*rel="next"/.exec(page)?.[1]?.replaceAll('&amp;', '&');

    const p1 = await (await get(s, '/activity', cookie)).text();
    expect(ids(p1)).toEqual(Array.from({ length: 50 }, (_, i) => 119 - i));
    const p2 = await (await get(s, `/activity?${next(p1)}`, cookie)).text();
    expect(ids(p2)).toEqual(Array.from({ length: 50 }, (_, i) => 69 - i));
    const p3 = await (await get(s, `/activity?${next(p2)}`, cookie)).text();
    expect(ids(p3)).toEqual(Array.from({ length: 20 }, (_, i) => 19 - i));
    expect(next(p3)).toBeUndefined();

    const beta = await (await get(s, `/activity?key=${b.id}`, cookie)).text();
    expect(ids(beta).every((i) => i % 3 === 0)).toBe(true);
    expect(ids(beta)).toHaveLength(40);
    const errors = await (await get(s, '/activity?outcome=server_error', cookie)).text();
    expect(ids(errors)).toEqual([110, 100, 90, 80, 70, 60, 50, 40, 30, 20, 10, 0]);
    const unknown = await (await get(s, '/activity?operation=unknown', cookie)).text();
    expect(ids(unknown)).toHaveLength(18);
    expect(unknown).toContain('unknown route');
    // Filters combine and are kept by the next link.
    const both = await (await get(s, `/activity?key=${a.id}&outcome=success`, cookie)).text();
    expect(ids(both)).toHaveLength(50);
    const bothNext = next(both)!;
    expect(bothNext).toContain(`key=${a.id}`);
    const both2 = await (await get(s, `/activity?${bothNext}`, cookie)).text();
    expect(ids(both2).every((i) => i % 3 !== 0 && i % 10 !== 0)).toBe(true);
    expect(ids(both).length + ids(both2).length).toBe(120 - 40 - 12 + 4);
  });

  test('batches whose times overlap are merged: every page, filtered or not, is the log in (time, id) order', async () => {
    const studio = await s.studio();
    const [a, b] = [await s.key(studio.id, 'secret', [], 'a'), await s.key(studio.id, 'secret', [], 'b')];
    // 700 calls over three minutes, recorded in a shuffled order and flushed in seven parts: each flush writes a batch
    // a key and minute, and the batches of one key overlap in time (as late 429 folds and failed flushes make them)
    const writer = new ActivityWriter(s.sql, 600_000);
    const t0 = Date.parse('2026-11-20T10:00:30.000Z');
    const calls = Array.from({ length: 700 }, (_, i) => i).sort(() => Math.random() - 0.5);
    for (const [n, i] of calls.entries()) {
      const status = i % 9 === 0 ? 500 : 200;
      writer.record({
        studioId: studio.id,
        keyId: i % 3 ? a.id : b.id,
        operationId: 'managementListInstructors',
        method: 'GET',
        path: '/v1/instructors',
        status,
        outcome: outcomeOf(status),
        durationMs: 1,
        requestId: `req_merge_${i}`,
        at: t0 + Math.floor(i / 2) * 500, // two calls share each millisecond: ids break the tie
      });
      if (n % 100 === 99) await writer.flush();
    }
    await writer.close();
    expect((await s.sql`select 1 from activity_batches where studio_id = ${studio.id}`).length).toBeGreaterThan(14);
    const { cookie } = await signIn(s, studio.id);
    const ids = (page: string) => [...page.matchAll(/data-request-id="(req_merge_\d+)"/g)].map((m) => m[1]!);
    const next = (page: string) =>
      /href="\/activity\?([^"]*)"[^>]*rel="next"/.exec(page)?.[1]?.replaceAll('&amp;', '&');
    for (const [query, where] of [
      ['', s.sql``],
      [`key=${b.id}`, s.sql`and key_id = ${b.id}`],
      ['outcome=server_error', s.sql`and status >= 500`],
      [`key=${a.id}&from=2026-11-20&to=2026-11-20`, s.sql`and key_id = ${a.id}`],
    ] as const) {
      const shown: string[] = [];
      for (let q: string | undefined = query; q !== undefined; ) {
        const page = await (await get(s, `/activity?${q}`, cookie)).text();
        shown.push(...ids(page));
        q = next(page);
      }
      const log = await s.sql<{ requestId: string }[]>`
        select request_id from activity where studio_id = ${studio.id} ${where} order by at desc, id desc`;
      expect([query, shown]).toEqual([query, log.map((r) => r.requestId)]);
    }
    // a round hands the gateway a page's worth of entries, however many its batches hold
    const none = { key: '', operation: '', outcome: '', from: '', to: '', after: '' };
    const round = await pageRoundQuery(s.sql, studio.id, none, null, 1024);
    const [batches] = await s.sql<
      { n: number }[]
    >`select count(*)::int as n from activity_batches where studio_id = ${studio.id}`;
    expect([round.length, round[0]!.read]).toEqual([PAGE_SIZE + 1, batches!.n]);
  });

  test('pages follow (time, id) to the microsecond: entries sharing a time are each shown once', async () => {
    const studio = await s.studio();
    const { id } = await s.key(studio.id, 'secret', ['instructors:read'], 'tie');
    // 60 entries in two instants a microsecond apart (a JavaScript Date cannot tell them apart)
    await s.sql`
      insert into activity (studio_id, key_id, method, path, status, outcome, duration_ms, request_id, at)
      select ${studio.id}, ${id}, 'GET', '/v1/x', 200, 'success', 1, 'req_tie_' || g,
             timestamptz '2026-11-20 10:00:00.123456+00' + (g % 2) * interval '1 microsecond'
      from generate_series(0, 59) g`;
    const { cookie } = await signIn(s, studio.id);
    const ids = (page: string) => [...page.matchAll(/data-request-id="req_tie_(\d+)"/g)].map((m) => Number(m[1]));
    const next = (page: string) =>
      /href="\/activity\?([^"]*)"[^>]*rel="next"/.exec(page)?.[1]?.replaceAll('&amp;', '&');
    const p1 = await (await get(s, '/activity', cookie)).text();
    const p2 = await (await get(s, `/activity?${next(p1)}`, cookie)).text();
    expect(ids(p1)).toHaveLength(50);
    expect(ids(p2)).toHaveLength(10);
    expect(next(p2)).toBeUndefined();
    expect(new Set([...ids(p1), ...ids(p2)]).size).toBe(60);
    // the later instant first
    expect(
      ids(p1)
        .slice(0, 30)
        .every((i) => i % 2 === 1),
    ).toBe(true);
  });

  test('a real call shows up with its operation, status and request id, and stamps last used', async () => {
    const studio = await s.studio();
    const { key, id } = await s.key(studio.id, 'secret', ['instructors:read'], 'caller');
    const res = await s.mg('/v1/instructors', key);
    const requestId = res.headers.get('x-request-id')!;
    await s.gateway.activity.flush();
    const { cookie } = await signIn(s, studio.id);
    const page = await (await get(s, '/activity', cookie)).text();
    expect(page).toContain(`data-request-id="${requestId}"`);
    expect(page).toContain('managementListInstructors');
    const keys = await (await get(s, '/keys', cookie)).text();
    expect(keys).not.toMatch(/data-label="Last used"><span class="muted">Never/);
    const [row] = await s.sql`select last_used_at from api_keys where id = ${id}`;
    expect(row!.lastUsedAt).not.toBeNull();
    expect(csrfOf(keys)).toBeTruthy();
  });
});
