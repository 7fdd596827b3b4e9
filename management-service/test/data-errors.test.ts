/**
 * docs/design/hostile-callers.md through the gateway: what a careless or hostile caller sends is refused with
 * a 422 that stays small (and so does its stored idempotent answer), every schema error at
 * once, and never a 500 from data: NUL in text, instants outside 1970–9999 in a body (sent
 * or derived), while query instants are clamped so no filter that worked is refused.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { TObject } from '@sinclair/typebox';
import { isWrite, newId, OPERATIONS, type Operation, SCOPES } from '@studio/shared';
import * as schemas from '@studio/shared/schemas';
import { EXAMPLES } from '@studio/shared/schemas';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { textPaths, withValueAt } from '../../test/schema-walk';
import { redisLocks } from '../src/kit/idempotency';
import { classBody, future, instructor, mgWrite } from './fixtures';

type Json = Record<string, any>;
let s: Stack;
let studioId: string;
let key: string;
/** A live record of each kind, by the path parameter that names it. */
const ids: Record<string, string> = {};

const write = (method: string, path: string, body?: unknown, idem: string = crypto.randomUUID()) =>
  mgWrite(s, method, path, key, body, idem);
const created = async (path: string, body: unknown) => {
  const res = await write('POST', path, body);
  if (res.status !== 201) throw new Error(`${path}: ${res.status} ${await res.text()}`);
  return ((await res.json()) as { id: string }).id;
};

beforeAll(async () => {
  s = await startStack();
  studioId = (await s.studio()).id;
  key = (await s.key(studioId, 'secret', SCOPES)).key;
  ids.instructorId = await instructor(s, studioId);
  ids.planId = await created('/v1/plans', {
    name: 'Drop-in',
    type: 'membership',
    config: { priceCents: 1500, currency: 'EUR', interval: 'month' },
  });
  ids.locationId = await created('/v1/locations', { name: 'Mitte' });
  ids.roomId = await created(`/v1/locations/${ids.locationId}/rooms`, { name: 'Sun Room' });
  ids.classId = await created(
    '/v1/classes',
    classBody(ids.instructorId, { recurrence: { intervalDays: 7, count: 2 } }),
  );
  ids.membershipId = await created('/v1/members/invites', { email: 'nul@example.com' });
  ids.programId = await created('/v1/programs', { name: 'Course' });
  ids.couponId = await created('/v1/coupons', { code: 'NULTEST', config: { kind: 'percent', percentOff: 5 } });
  const page = (await (await s.mg(`/v1/schedule?classId=${ids.classId}`, key)).json()) as { data: { id: string }[] };
  ids.occurrenceId = page.data[0]!.id;
  ids.contentId = newId('content');
  await s.sql`insert into content ${s.sql({ id: ids.contentId, studioId, title: 'Body scan' })}`;
});
afterAll(() => s.close());

/** Each write's example body (examples.ts), pointing at this studio's records. */
const SCHEMA_NAMES = new Map<unknown, string>(Object.entries(schemas).map(([n, v]) => [v, n] as const));
function exampleBody(op: Operation): Json {
  const example = (EXAMPLES as Record<string, unknown>)[SCHEMA_NAMES.get(op.body)!];
  const prefixes: Record<string, string> = {
    ins: 'instructorId',
    pln: 'planId',
    loc: 'locationId',
    room: 'roomId',
    cls: 'classId',
  };
  const text = JSON.stringify(example).replace(
    /\b(ins|pln|loc|room|cls)_[0-9A-Za-z]{22}\b/g,
    (_, p: string) => ids[prefixes[p]!]!,
  );
  return JSON.parse(text);
}
const pathOf = (op: Operation) => op.path.replace(/\{(\w+)\}/g, (_, name: string) => ids[name]!);
const withNul = (old: unknown) =>
  typeof old === 'string' && old.length > 1 ? `${old.slice(0, 1)}\u0000${old.slice(1)}` : 'a\u0000b';
const errorPaths = (p: Json) => (p.errors as { path: string }[]).map((e) => e.path);

describe('NUL in any text is 422, never 500', () => {
  const cases = (OPERATIONS as readonly Operation[])
    .filter((o): o is Operation & { body: TObject } => isWrite(o) && !!o.body)
    .flatMap((op) =>
      textPaths(op.body).map(({ path, documented }) => [`${op.id} ${path}`, op, path, documented] as const),
    );

  test('the registry has text to probe in every write body', () => {
    expect(cases.length).toBeGreaterThan(50);
  });

  test.each(cases)('%s', async (_, op, path, documented) => {
    const res = await write(op.method, pathOf(op), withValueAt(exampleBody(op), path, withNul));
    expect(res.status).toBe(422);
    // a field the schema checks is validation_failed; a config the service checks is its own 422 (invalid_plan_config, …)
    const code = documented ? op.problems!.find((c) => c.endsWith('_config'))! : 'validation_failed';
    const problem = await expectProblem(res, 422, code);
    expect(errorPaths(problem)).toContain(`/body${path}`);
  });

  test('in a query: every text parameter of every list, through both surfaces', async () => {
    const pk = (await s.key(studioId, 'publishable')).key;
    for (const op of (OPERATIONS as readonly Operation[]).filter((o) => o.query)) {
      for (const { path } of textPaths(op.query!)) {
        const name = path.slice(1);
        const url = `${pathOf(op)}?${name}=${encodeURIComponent('a\u0000b')}`;
        const res = op.surface === 'storefront' ? await s.sf(url, pk) : await s.mg(url, key);
        const where = `${op.id} ?${name} -> ${res.status}`;
        // a cursor is refused by its signature (400), a limit is clamped (200): neither reaches SQL as text
        const expected = name === 'cursor' ? 400 : name === 'limit' ? 200 : 422;
        expect(where).toBe(`${op.id} ?${name} -> ${expected}`);
        if (expected === 422) expect(errorPaths(await res.json())).toEqual([`/query/${name}`]);
      }
    }
  });
});

describe('instants: body ones outside 1970–9999 are 422, derived ones too; query ones are clamped', () => {
  test('year 0, 1969 and a 9999 that is year 10000 in UTC, in every body instant', async () => {
    const sends: [string, string, (v: string) => unknown, string][] = [
      ['POST', '/v1/classes', (v) => classBody(ids.instructorId!, { startsAt: v }), '/body/startsAt'],
      ['PATCH', `/v1/schedule/${ids.occurrenceId}`, (v) => ({ startsAt: v }), '/body/startsAt'],
      [
        'POST',
        '/v1/coupons',
        (v) => ({ code: 'EXPIRY', config: { kind: 'percent', percentOff: 5 }, expiresAt: v }),
        '/body/expiresAt',
      ],
    ];
    for (const [method, path, body, field] of sends) {
      for (const v of ['0000-01-01T00:00:00Z', '1969-12-31T23:59:59Z', '9999-12-31T23:59:59-01:00']) {
        const p = await expectProblem(await write(method, path, body(v)), 422, 'validation_failed');
        expect(errorPaths(p)).toEqual([field]);
        expect((p.errors as Json[])[0]!.message).toStartWith(
          'must be from 1970-01-01T00:00:00Z to 9999-12-31T23:59:59Z',
        );
      }
    }
    // the last instant itself is fine where nothing is derived from it
    expect((await write('POST', '/v1/coupons', sends[2]![2]('9999-12-31T23:59:59Z'))).status).toBe(201);
  });

  test("an occurrence's end, a recurrence's last start, a reschedule and a new duration past 9999 are 422", async () => {
    const late = (over: Json) => classBody(ids.instructorId!, { startsAt: '9999-12-31T23:00:00Z', ...over });
    let p = await expectProblem(
      await write('POST', '/v1/classes', late({ durationMinutes: 61 })),
      422,
      'validation_failed',
    );
    expect(errorPaths(p)).toEqual(['/body/startsAt']);
    p = await expectProblem(
      await write(
        'POST',
        '/v1/classes',
        late({ startsAt: '9999-12-01T00:00:00Z', recurrence: { intervalDays: 7, count: 6 } }),
      ),
      422,
      'validation_failed',
    );
    expect(errorPaths(p)).toEqual(['/body/recurrence']);
    p = await expectProblem(
      await write('PATCH', `/v1/schedule/${ids.occurrenceId}`, { startsAt: '9999-12-31T23:59:59Z' }),
      422,
      'validation_failed',
    );
    expect(errorPaths(p)).toEqual(['/body/startsAt']);
    // right up to the edge is fine, and then a longer duration would cross it
    const edge = await write('POST', '/v1/classes', late({ startsAt: '9999-12-31T23:50:00Z', durationMinutes: 5 }));
    expect(edge.status).toBe(201);
    const { id } = (await edge.json()) as { id: string };
    p = await expectProblem(
      await write('PATCH', `/v1/classes/${id}`, { durationMinutes: 60 }),
      422,
      'validation_failed',
    );
    expect(errorPaths(p)).toEqual(['/body/durationMinutes']);
    expect((await write('PATCH', `/v1/classes/${id}`, { durationMinutes: 9 })).status).toBe(200);
  });

  test('query instants from year 0 to 9999 answer as they always did, moved into the range', async () => {
    const all = async (q: string) =>
      ((await (await s.mg(`/v1/schedule?classId=${ids.classId}&${q}`, key)).json()) as { data: unknown[] }).data.length;
    expect(await all('from=0000-01-01T00:00:00Z')).toBe(2);
    expect(await all('to=9999-12-31T23:59:59Z')).toBe(2);
    expect(await all('from=0000-01-01T00:00:00Z&to=9999-12-31T23:59:59-01:00')).toBe(2);
    expect(await all('to=0000-01-01T00:00:00Z')).toBe(0);
    expect(await all('from=9999-12-31T23:59:59Z')).toBe(0);
    const pk = (await s.key(studioId, 'publishable')).key;
    for (const q of [
      'from=0000-01-01T00:00:00Z',
      'from=9999-12-31T23:59:59Z',
      `from=9999-12-31T00:00:00Z&to=9999-12-31T23:59:59-01:00`,
    ]) {
      const res = await s.sf(`/v1/classes?${q}`, pk);
      expect(`${q} -> ${res.status}`).toBe(`${q} -> 200`);
    }
  });
});

describe('a 422 names every bad field at once', () => {
  test('two top-level fields, and the fields inside a nullable object', async () => {
    let p = await expectProblem(await write('POST', '/v1/instructors', { name: '', bio: 5 }), 422, 'validation_failed');
    expect(errorPaths(p)).toEqual(['/body/name', '/body/bio']);
    p = await expectProblem(
      await write('POST', '/v1/locations', { name: '', address: { city: 5, zip: '10999' } }),
      422,
      'validation_failed',
    );
    expect(p.errors).toEqual([
      { path: '/body/name', message: 'must not be empty' },
      { path: '/body/address/zip', message: 'is not a field of this object' },
      { path: '/body/address/city', message: 'must be a string, or null' },
    ]);
  });
});

describe('answers stay small whatever was sent, and so do their stored copies', () => {
  /** The stored answer of a key, in Postgres and in Redis, in bytes (0 when none was stored). */
  async function stored(idem: string) {
    const [row] = await s.sql<
      { bytes: number }[]
    >`select octet_length(body) + octet_length(headers::text) as bytes from idempotency_records where studio_id = ${studioId} and key = ${idem}`;
    const hot = await redisLocks(s.redis, s.config.REDIS_PREFIX).cached(studioId, idem);
    return { postgres: row?.bytes ?? 0, redis: hot ? Buffer.byteLength(JSON.stringify(hot)) : 0 };
  }

  test('a 100 KB instructorId on PATCH /v1/content/{id}: a 422 under 8 KB that quotes none of it', async () => {
    const idem = crypto.randomUUID();
    const res = await write(
      'PATCH',
      `/v1/content/${ids.contentId}`,
      { instructorId: `ins_${'x'.repeat(100_000)}` },
      idem,
    );
    const text = await res.clone().text();
    const p = await expectProblem(res, 422, 'validation_failed');
    expect(p.errors).toEqual([{ path: '/body/instructorId', message: 'must be at most 64 characters, or null' }]);
    expect(Buffer.byteLength(text)).toBeLessThan(8 * 1024);
    expect(text).not.toContain('x'.repeat(101));
    const { postgres, redis } = await stored(idem);
    expect(postgres).toBeLessThan(64 * 1024);
    expect(redis).toBeLessThan(64 * 1024);
  });

  test('500 unknown classIds: 20 errors and one saying 480 more; the stored answer is under 64 KB', async () => {
    const idem = crypto.randomUUID();
    const classIds = Array.from({ length: 500 }, (_, i) => `cls_${String(i).padStart(60, 'q')}`);
    const res = await write('POST', '/v1/programs', { name: 'Course', classIds }, idem);
    const text = await res.clone().text();
    const p = await expectProblem(res, 422, 'validation_failed');
    expect(p.errors).toHaveLength(21);
    expect((p.errors as Json[])[0]).toEqual({ path: '/body/classIds/0', message: 'is not a class of this studio' });
    expect((p.errors as Json[])[20]).toEqual({
      path: '/body',
      message: 'and 480 more errors not listed; fix these and send again',
    });
    expect(p.detail).toBe('The request is not valid (500 errors); `errors` names each field and why.');
    expect(Buffer.byteLength(text)).toBeLessThan(8 * 1024);
    const { postgres, redis } = await stored(idem);
    expect(postgres).toBeGreaterThan(0); // a business error is stored for replay…
    expect(postgres).toBeLessThan(64 * 1024); // …small
    expect(redis).toBeLessThan(64 * 1024);
  });

  test('a plan config with 10,000 unknown keys: 21 entries, each path segment cut to 64 characters; stored under 64 KB', async () => {
    const idem = crypto.randomUUID();
    const config: Json = { priceCents: 1500, currency: 'EUR' };
    for (let i = 0; i < 10_000; i++) config[`${'k'.repeat(80)}${i}`] = i;
    const res = await write('POST', '/v1/plans', { name: 'Drop-in', type: 'drop_in', config }, idem);
    const text = await res.clone().text();
    const p = await expectProblem(res, 422, 'invalid_plan_config');
    expect(p.errors).toHaveLength(21);
    for (const e of p.errors as Json[])
      for (const seg of String(e.path).split('/')) expect(seg.length).toBeLessThanOrEqual(65);
    expect((p.errors as Json[])[0]!.path).toBe(`/body/config/${'k'.repeat(64)}…`);
    // searched for its first 1,000 errors only (docs/design/hostile-callers.md)
    expect((p.errors as Json[])[20]!.message).toBe('and at least 980 more errors not listed; fix these and send again');
    expect(String(p.detail)).not.toContain('kkk');
    expect(Buffer.byteLength(text)).toBeLessThan(8 * 1024);
    const { postgres, redis } = await stored(idem);
    expect(postgres).toBeGreaterThan(0);
    expect(postgres).toBeLessThan(64 * 1024);
    expect(redis).toBeLessThan(64 * 1024);
  });
});

test('a day-old future instant still works (the range does not touch ordinary writes)', async () => {
  expect((await write('PATCH', `/v1/schedule/${ids.occurrenceId}`, { startsAt: future(3) })).status).toBe(200);
});
