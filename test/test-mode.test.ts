/**
 * Test mode (docs/design/test-mode.md): a sandbox is a studio of its own, linked to its live studio. A test key never
 * reaches live data and a live key never reaches a sandbox's: each answers as a key of another studio does, and
 * leaves the other's records, events and activity as they were. The reset returns a sandbox to its seed and leaves
 * its live studio byte-identical. Run in both modes (Redis and single-node).
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createSandbox, MAX_SANDBOXES } from '@studio/management-service/sandboxes';
import { OPERATIONS, type Operation, SCOPES, scopesOfMode } from '@studio/shared';
import { seedDemo } from '../scripts/lib/seed';
import { expectProblem, inMode, MODES, type Stack, startStack } from './harness';

/** Every table a studio's data lives in, with how its rows are told apart (the snapshot's order). */
const TABLES = [
  'instructors',
  'locations',
  'rooms',
  'plans',
  'classes',
  'class_plans',
  'occurrences',
  'members',
  'coupons',
  'programs',
  'content',
  'sites',
  'policies',
  'idempotency_records',
  'events',
  'api_keys',
  'webhook_endpoints',
  'webhook_deliveries',
  'activity',
] as const;

/** A digest of everything a studio holds: equal digests, byte-identical data. */
async function snapshot(s: Stack, studioId: string): Promise<Record<string, string>> {
  await s.gateway.activity.flush();
  const out: Record<string, string> = {};
  for (const table of TABLES) {
    const [row] = await s.sql<{ d: string | null }[]>`
      select md5(string_agg(t::text, '|' order by t::text)) as d from ${s.sql(table)} t where studio_id = ${studioId}`;
    out[table] = row!.d ?? 'empty';
  }
  const [studio] = await s.sql<{ d: string }[]>`select md5(t::text) as d from studios t where id = ${studioId}`;
  out.studio = studio!.d;
  return out;
}

/** One id of each kind a path names, from a studio's own records. */
async function idsOf(s: Stack, studioId: string): Promise<Record<string, string>> {
  const one = async (table: string, extra = s.sql``) => {
    const [r] = await s.sql<
      { id: string }[]
    >`select id from ${s.sql(table)} where studio_id = ${studioId} ${extra} order by id limit 1`;
    return r!.id;
  };
  return {
    classId: await one('classes'),
    occurrenceId: await one('occurrences'),
    membershipId: await one('members', s.sql`and role <> 'admin'`),
    instructorId: await one('instructors'),
    locationId: await one('locations'),
    roomId: await one('rooms'),
    planId: await one('plans'),
    couponId: await one('coupons'),
    programId: await one('programs'),
    contentId: await one('content'),
    eventId: await one('events'),
  };
}

const pathWith = (op: Operation, ids: Record<string, string>) =>
  op.path.replace(/\{(\w+)\}/g, (_, name: string) => {
    const id = ids[name];
    if (!id) throw new Error(`no id for {${name}} of ${op.id}`);
    return id;
  });

describe.each(MODES)('test mode (%s)', (mode) => {
  let s: Stack;
  let live: { studioId: string; pk: string; sk: string };
  let sandbox: { studioId: string; pk: string; sk: string };
  let other: { studioId: string; pk: string; sk: string };
  let created: Record<string, number>;

  beforeAll(async () => {
    s = await startStack(inMode(mode, { env: { RATE_LIMIT_TEST: '1000:2000' } }));
    const demo = await seedDemo(s.sql, s.config);
    created = demo.created;
    live = { studioId: demo.studio.id, pk: demo.keys.publishable, sk: demo.keys.secret };
    sandbox = { studioId: demo.sandbox.id, pk: demo.testKeys.publishable, sk: demo.testKeys.secret };
    const third = await s.studio();
    other = {
      studioId: third.id,
      pk: (await s.key(third.id, 'publishable')).key,
      sk: (await s.key(third.id, 'secret', SCOPES)).key,
    };
    // an event in each, so the events reads have an id to be asked for
    for (const key of [live.sk, sandbox.sk]) {
      const r = await s.mg('/v1/instructors', key, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
        body: JSON.stringify({ name: 'Event Maker', email: `maker-${crypto.randomUUID().slice(0, 8)}@lotus.test` }),
      });
      expect(r.status).toBe(201);
    }
  });
  afterAll(() => s.close());

  test('the demo seed made a live studio and its default sandbox, each with its own keys: live keys are live, test keys are test', async () => {
    expect(live.sk).toMatch(/^svc_sk_[0-9A-Za-z]{32}$/);
    expect(sandbox.sk).toMatch(/^svc_sk_test_[0-9A-Za-z]{32}$/);
    expect(sandbox.pk).toMatch(/^svc_pk_test_[0-9A-Za-z]{32}$/);
    const [row] = await s.sql<{ liveStudioId: string; sandboxName: string; name: string }[]>`
      select live_studio_id, sandbox_name, name from studios where id = ${sandbox.studioId}`;
    expect(row).toEqual({ liveStudioId: live.studioId, sandboxName: 'default', name: 'Lotus Yoga (demo) (test)' });
    // the test publishable key answers every Storefront operation at once, from the sandbox's seed
    for (const op of OPERATIONS.filter((o) => o.surface === 'storefront')) {
      const r = await s.sf(op.path, sandbox.pk);
      expect({ op: op.id, status: r.status }).toEqual({ op: op.id, status: 200 });
      await r.arrayBuffer();
    }
    const config = await (await s.sf('/v1/config', sandbox.pk)).json();
    expect(config.studio.name).toBe('Lotus Yoga (demo) (test)');
  });

  /**
   * Each operation that names a record, called with one studio's key and the other's ids, answers exactly as the
   * same call with a third studio's key: no read, no write, no event.
   */
  async function walk(caller: { sk: string; pk: string }, target: string) {
    const ids = await idsOf(s, target);
    const before = await snapshot(s, target);
    const differs: string[] = [];
    for (const op of OPERATIONS.filter((o) => o.path.includes('{'))) {
      const path = pathWith(op, ids);
      const init = (): RequestInit => ({
        method: op.method,
        headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
        ...(op.method === 'GET' || op.method === 'DELETE' ? {} : { body: '{}' }),
      });
      const call = (key: string) => (op.surface === 'storefront' ? s.sf(path, key, init()) : s.mg(path, key, init()));
      const mine = await call(op.surface === 'storefront' ? caller.pk : caller.sk);
      const theirs = await call(op.surface === 'storefront' ? other.pk : other.sk);
      const a = { status: mine.status, code: (await mine.json().catch(() => ({}))).code };
      const b = { status: theirs.status, code: (await theirs.json().catch(() => ({}))).code };
      if (a.status !== b.status || a.code !== b.code || a.status < 400)
        differs.push(`${op.id}: ${JSON.stringify(a)} vs another studio's ${JSON.stringify(b)}`);
    }
    expect(differs).toEqual([]);
    expect(await snapshot(s, target)).toEqual(before);
  }

  test("walking the registry: a test key with the live studio's ids answers as a key of another studio, and the live studio is unchanged", async () => {
    await walk(sandbox, live.studioId);
  });

  test("walking the registry: a live key with the sandbox's ids answers as a key of another studio, and the sandbox is unchanged", async () => {
    await walk(live, sandbox.studioId);
  });

  test("lists and the feed: each key sees only its own studio's records and events", async () => {
    for (const [me, them] of [
      [live, sandbox],
      [sandbox, live],
    ] as const) {
      const theirs = new Set(
        (
          await s.sql<{ id: string }[]>`
          select id from instructors where studio_id = ${them.studioId}
          union all select id from events where studio_id = ${them.studioId}
          union all select id from classes where studio_id = ${them.studioId}`
        ).map((r) => r.id),
      );
      expect(theirs.size).toBeGreaterThan(0);
      for (const path of ['/v1/instructors', '/v1/events', '/v1/classes']) {
        const body = await (await s.mg(path, me.sk)).json();
        expect(body.data.length).toBeGreaterThan(0);
        expect(body.data.filter((r: { id: string }) => theirs.has(r.id))).toEqual([]);
      }
      const sf = await (await s.sf('/v1/instructors', me.pk)).json();
      expect(sf.instructors.filter((r: { id: string }) => theirs.has(r.id))).toEqual([]);
    }
  });

  test('the reset: a live key is refused with 403 test_mode_required and changes nothing (but its own activity entry)', async () => {
    const { activity: _, ...before } = await snapshot(s, live.studioId);
    const body = await expectProblem(
      await s.mg('/v1/sandbox/reset', live.sk, { method: 'POST', headers: { 'idempotency-key': crypto.randomUUID() } }),
      403,
      'test_mode_required',
    );
    expect(body.detail).toContain('svc_sk_test_');
    // a test key without sandbox:write: the scope is what it lacks
    const bare = (await s.key(sandbox.studioId, 'secret', ['classes:read'])).key;
    expect(bare).toStartWith('svc_sk_test_');
    const scoped = await expectProblem(
      await s.mg('/v1/sandbox/reset', bare, { method: 'POST', headers: { 'idempotency-key': crypto.randomUUID() } }),
      403,
      'scope_required',
    );
    expect(scoped.requiredScope).toBe('sandbox:write');
    const { activity: __, ...after } = await snapshot(s, live.studioId);
    expect(after).toEqual(before);
  });

  test('the reset returns the sandbox to its seed (keys and endpoints kept), no cached Storefront answer outlives it, and the live studio is byte-identical', async () => {
    const liveBefore = await snapshot(s, live.studioId);
    const keysBefore = await s.sql`select id, hash from api_keys where studio_id = ${sandbox.studioId} order by id`;
    // a change in the sandbox, and its Storefront answer cached
    const made = await s.mg('/v1/instructors', sandbox.sk, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'before-reset' },
      body: JSON.stringify({ name: 'Gone After Reset', email: 'gone@lotus.test' }),
    });
    expect(made.status).toBe(201);
    const cached = await (await s.sf('/v1/instructors', sandbox.pk)).json();
    expect(cached.instructors.map((i: { name: string }) => i.name)).toContain('Gone After Reset');

    const t0 = performance.now();
    const res = await s.mg('/v1/sandbox/reset', sandbox.sk, {
      method: 'POST',
      headers: { 'idempotency-key': crypto.randomUUID() },
    });
    const took = performance.now() - t0;
    expect(res.status).toBe(200);
    const reset = await res.json();
    expect(reset).toMatchObject({
      id: sandbox.studioId,
      name: 'default',
      liveStudioId: live.studioId,
      // seeded again exactly as the demo seed made it
      seeded: created,
    });
    expect(took).toBeLessThan(2_000);
    const counts = await s.sql<{ t: string; n: number }[]>`
      select 'instructors' as t, count(*)::int as n from instructors where studio_id = ${sandbox.studioId}
      union all select 'occurrences', count(*)::int from occurrences where studio_id = ${sandbox.studioId}
      union all select 'events', count(*)::int from events where studio_id = ${sandbox.studioId}
      union all select 'idempotency', count(*)::int from idempotency_records where studio_id = ${sandbox.studioId}`;
    expect(Object.fromEntries(counts.map((c) => [c.t, c.n]))).toEqual({
      instructors: 4,
      occurrences: 65,
      events: 0,
      idempotency: 1, // the reset's own, so that a retry of it replays
    });
    expect(await s.sql`select id, hash from api_keys where studio_id = ${sandbox.studioId} order by id`).toEqual(
      keysBefore,
    );
    // every gateway dropped the sandbox's cached answers: the new seed's instructors, not the old ones
    const after = await (await s.sf('/v1/instructors', sandbox.pk)).json();
    const seeded = (
      await s.sql<{ id: string }[]>`select id from instructors where studio_id = ${sandbox.studioId}`
    ).map((r) => r.id);
    expect(after.instructors.map((i: { id: string }) => i.id).sort()).toEqual(seeded.sort());
    // an idempotency key used before the reset is a new request after it
    const again = await s.mg('/v1/instructors', sandbox.sk, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': 'before-reset' },
      body: JSON.stringify({ name: 'Gone After Reset', email: 'gone@lotus.test' }),
    });
    expect(again.status).toBe(201);
    expect(again.headers.get('idempotent-replayed')).toBeNull();
    expect(await snapshot(s, live.studioId)).toEqual(liveBefore);
  });

  test('a studio has at most five sandboxes: the sixth is refused with sandbox_limit_reached', async () => {
    const studio = await s.studio();
    for (let i = 0; i < MAX_SANDBOXES; i++) await createSandbox(s.sql, studio.id, `sb-${i}`);
    const refused = await createSandbox(s.sql, studio.id, 'one-too-many').catch((e) => e);
    expect(refused).toMatchObject({ code: 'sandbox_limit_reached' });
    expect(refused.message).toContain('5 sandboxes');
    const [row] = await s.sql<{ n: number }[]>`
      select count(*)::int as n from studios where live_studio_id = ${studio.id}`;
    expect(row!.n).toBe(MAX_SANDBOXES);
  });

  test('a live key cannot be given sandbox:write; a test key gets it with every other scope', async () => {
    const { createApiKey } = await import('@studio/control');
    const refused = await createApiKey(s.sql, {
      studioId: live.studioId,
      kind: 'secret',
      name: 'x',
      scopes: ['sandbox:write'],
    }).catch((e) => e);
    expect(refused).toMatchObject({ code: 'validation_failed' });
    const made = await createApiKey(s.sql, {
      studioId: sandbox.studioId,
      kind: 'secret',
      name: 'ci',
      scopes: [...scopesOfMode('test')],
    });
    expect(made.key).toStartWith('svc_sk_test_');
    expect(made.record).toMatchObject({ mode: 'test', hint: `svc_sk_test_…${made.key.slice(-4)}` });
    expect(made.record.scopes).toContain('sandbox:write');
  });

  test("a sign-in link is a live studio's: one for a sandbox is refused, naming its live studio", async () => {
    const { createLoginLink } = await import('@studio/control');
    const refused = await createLoginLink(s.sql, s.config, sandbox.studioId).catch((e) => e);
    expect(refused).toMatchObject({ code: 'validation_failed' });
    expect(refused.message).toContain(live.studioId);
    expect((await createLoginLink(s.sql, s.config, live.studioId)).url).toContain('/login?token=');
  });

  test("a test key pasted into a URL is kept redacted in the sandbox's activity, its mode word kept", async () => {
    const r = await s.mg(`/v1/instructors?api_key=${sandbox.sk}`, sandbox.sk);
    const id = r.headers.get('x-request-id');
    await r.arrayBuffer();
    await s.gateway.activity.flush();
    const rows = await s.sql<{ query: string }[]>`select query from activity where request_id = ${id}`;
    expect([...rows]).toEqual([{ query: 'api_key=svc_sk_test_[redacted]' }]);
    const [inLive] = await s.sql<{ n: number }[]>`
      select count(*)::int as n from activity where studio_id = ${live.studioId} and request_id = ${id}`;
    expect(inLive!.n).toBe(0);
  });
});

describe("a test key's rate limit is its own", () => {
  let s: Stack;
  beforeAll(async () => {
    s = await startStack({ env: { RATE_LIMIT_TEST: '1:3', RATE_LIMIT_SECRET: '1000:2000' } });
  });
  afterAll(() => s.close());

  test('RATE_LIMIT_TEST holds a test key to its burst while a live key of the same studio goes on', async () => {
    const demo = await seedDemo(s.sql, s.config);
    const statuses = async (key: string, n: number) => {
      const out: number[] = [];
      for (let i = 0; i < n; i++) {
        const r = await s.mg('/v1/instructors', key);
        await r.arrayBuffer();
        out.push(r.status);
      }
      return out;
    };
    const test = await statuses(demo.testKeys.secret, 5);
    expect(test.slice(0, 3)).toEqual([200, 200, 200]);
    expect(test.slice(3)).toEqual([429, 429]);
    expect(await statuses(demo.keys.secret, 10)).toEqual(Array(10).fill(200));
    // a second test key has a bucket of its own
    const { createApiKey } = await import('@studio/control');
    const second = await createApiKey(s.sql, {
      studioId: demo.sandbox.id,
      kind: 'secret',
      name: 'second',
      scopes: ['instructors:read'],
    });
    expect((await statuses(second.key, 1))[0]).toBe(200);
    const limited = await s.mg('/v1/instructors', demo.testKeys.secret);
    expect(limited.headers.get('ratelimit-policy')).toContain('q=1');
  });
});
