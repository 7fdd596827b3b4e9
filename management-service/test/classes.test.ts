import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Class } from '@studio/shared/schemas';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { classBody, DAY, future, instructor, plan, studioWithKey } from './fixtures';

let s: Stack;
beforeAll(async () => (s = await startStack()));
afterAll(() => s.close());

const occurrences = (classId: string) => s.sql<
  { startsAt: Date; status: string; instructorId: string; durationMinutes: number }[]
>`
  select starts_at, status, instructor_id, duration_minutes from occurrences where class_id = ${classId} order by starts_at`;

describe('managementCreateClass', () => {
  test('201 with the record, Location, and every occurrence of the recurrence', async () => {
    const { studio, write, get } = await studioWithKey(s);
    const ins = await instructor(s, studio.id);
    const pln = await plan(s, studio.id);
    const startsAt = future(3);
    const res = await write(
      'POST',
      '/v1/classes',
      classBody(ins, {
        startsAt: startsAt.replace('Z', '+00:00'),
        discipline: 'yoga',
        level: 'beginner',
        capacity: 12,
        visibility: 'unlisted',
        planIds: [pln],
        recurrence: { intervalDays: 7, count: 52 },
      }),
    );
    expect(res.status).toBe(201);
    const c = (await res.json()) as Class;
    expect(res.headers.get('location')).toBe(`/v1/classes/${c.id}`);
    expect(c.id).toMatch(/^cls_/);
    expect(c).toMatchObject({
      title: 'Morning Flow',
      mode: 'broadcast',
      instructorId: ins,
      startsAt,
      durationMinutes: 60,
      discipline: 'yoga',
      level: 'beginner',
      capacity: 12,
      visibility: 'unlisted',
      planIds: [pln],
      recurrence: { intervalDays: 7, count: 52 },
      status: 'scheduled',
      occurrenceCount: 52,
      nextOccurrenceAt: startsAt,
      cancelledAt: null,
    });
    expect(c.createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    const occ = await occurrences(c.id);
    expect(occ.length).toBe(52);
    expect(occ[51]!.startsAt.getTime() - occ[0]!.startsAt.getTime()).toBe(51 * 7 * DAY);
    const list = await (await get('/v1/classes')).json();
    expect(list.data.map((x: Class) => x.id)).toEqual([c.id]);
  });

  test('defaults: level all_levels, visibility public, one occurrence', async () => {
    const { studio, write } = await studioWithKey(s);
    const c = await (await write('POST', '/v1/classes', classBody(await instructor(s, studio.id)))).json();
    expect(c).toMatchObject({
      level: 'all_levels',
      visibility: 'public',
      occurrenceCount: 1,
      planIds: [],
      discipline: null,
      capacity: null,
      recurrence: null,
    });
  });

  test('409 instructor_double_booked, and a recurrence that collides creates nothing', async () => {
    const { studio, write } = await studioWithKey(s);
    const ins = await instructor(s, studio.id);
    const at = future(40);
    const first = await (await write('POST', '/v1/classes', classBody(ins, { startsAt: at }))).json();
    const [firstOcc] = await s.sql`select id from occurrences where class_id = ${first.id}`;
    const conflict = {
      id: firstOcc!.id,
      classId: first.id,
      startsAt: at,
      endsAt: new Date(Date.parse(at) + 3_600_000).toISOString(),
    };
    const overlapping = new Date(Date.parse(at) + 30 * 60_000).toISOString();
    const idem = crypto.randomUUID();
    const refused = await expectProblem(
      await write('POST', '/v1/classes', classBody(ins, { startsAt: overlapping }), idem),
      409,
      'instructor_double_booked',
    );
    expect(refused.conflictingOccurrence).toEqual(conflict);
    // the stored answer a retry replays names it too
    expect(
      (
        await expectProblem(
          await write('POST', '/v1/classes', classBody(ins, { startsAt: overlapping }), idem),
          409,
          'instructor_double_booked',
        )
      ).conflictingOccurrence,
    ).toEqual(conflict);
    // the 5th weekly occurrence lands on the existing class: the whole series is refused, naming it
    const series = new Date(Date.parse(at) - 4 * 7 * DAY).toISOString();
    const seriesRefused = await expectProblem(
      await write(
        'POST',
        '/v1/classes',
        classBody(ins, { startsAt: series, recurrence: { intervalDays: 7, count: 8 } }),
      ),
      409,
      'instructor_double_booked',
    );
    expect(seriesRefused.conflictingOccurrence).toEqual(conflict);
    const [n] =
      await s.sql`select (select count(*)::int from classes where studio_id = ${studio.id}) as c, (select count(*)::int from occurrences where studio_id = ${studio.id}) as o`;
    expect(n).toEqual({ c: 1, o: 1 });
    // back-to-back is fine ([start, end) ranges), and another instructor may teach at the same time
    expect(
      (
        await write(
          'POST',
          '/v1/classes',
          classBody(ins, { startsAt: new Date(Date.parse(at) + 60 * 60_000).toISOString() }),
        )
      ).status,
    ).toBe(201);
    expect(
      (await write('POST', '/v1/classes', classBody(await instructor(s, studio.id, 'Bo'), { startsAt: at }))).status,
    ).toBe(201);
  });

  test('20 concurrent overlapping creates for one instructor: exactly one class', async () => {
    const { studio, write } = await studioWithKey(s);
    const ins = await instructor(s, studio.id);
    const base = Date.parse(future(20));
    const results = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        write(
          'POST',
          '/v1/classes',
          classBody(ins, { startsAt: new Date(base + i * 60_000).toISOString(), title: `Race ${i}` }),
        ),
      ),
    );
    const statuses = results.map((r) => r.status).sort();
    expect(statuses.filter((x) => x === 201).length).toBe(1);
    for (const r of results) if (r.status !== 201) await expectProblem(r, 409, 'instructor_double_booked');
    const [n] = await s.sql`select count(*)::int as n from classes where studio_id = ${studio.id}`;
    expect(n!.n).toBe(1);
  });

  test('422 rules: unknown instructor or plan, mode not enabled, start in the past, validation', async () => {
    const { studio, write } = await studioWithKey(s, { modes: ['broadcast', 'two_way'] });
    const ins = await instructor(s, studio.id);
    const other = await s.studio();
    await expectProblem(await write('POST', '/v1/classes', classBody('ins_doesnotexist')), 422, 'unknown_instructor');
    await expectProblem(
      await write('POST', '/v1/classes', classBody(await instructor(s, other.id))),
      422,
      'unknown_instructor',
    );
    await expectProblem(
      await write('POST', '/v1/classes', classBody(await instructor(s, studio.id, 'Gone', false))),
      422,
      'unknown_instructor',
    );
    await expectProblem(
      await write('POST', '/v1/classes', classBody(ins, { planIds: ['pln_nope'] })),
      422,
      'unknown_plan',
    );
    await expectProblem(
      await write('POST', '/v1/classes', classBody(ins, { planIds: [await plan(s, studio.id, 'archived')] })),
      422,
      'unknown_plan',
    );
    await expectProblem(
      await write('POST', '/v1/classes', classBody(ins, { planIds: [await plan(s, other.id)] })),
      422,
      'unknown_plan',
    );
    await expectProblem(
      await write('POST', '/v1/classes', classBody(ins, { mode: 'coaching' })),
      422,
      'unsupported_channel',
    );
    await expectProblem(
      await write('POST', '/v1/classes', classBody(ins, { startsAt: new Date(Date.now() - 60_000).toISOString() })),
      422,
      'occurrence_in_past',
    );
    await expectProblem(
      await write('POST', '/v1/classes', classBody(ins, { locationId: 'loc_nope' })),
      422,
      'unknown_location',
    );
    const bad = [
      { mode: 'telepathy' },
      { durationMinutes: 4 },
      { durationMinutes: 721 },
      { title: '' },
      { startsAt: 'tomorrow' },
      { startsAt: '2030-01-01T10:00:00' },
      { capacity: 0 },
      { level: 'expert' },
      { visibility: 'secret' },
      { recurrence: { intervalDays: 0, count: 2 } },
      { recurrence: { intervalDays: 1, count: 366 } },
      { extra: 1 },
    ];
    for (const over of bad) {
      const body = await expectProblem(
        await write('POST', '/v1/classes', classBody(ins, over)),
        422,
        'validation_failed',
      );
      expect(Array.isArray(body.errors)).toBe(true);
    }
    const { title: _t, ...noTitle } = classBody(ins);
    await expectProblem(await write('POST', '/v1/classes', noTitle), 422, 'validation_failed');
    await expectProblem(await write('POST', '/v1/classes', '{"title": '), 400, 'malformed_json');
    const [n] = await s.sql`select count(*)::int as n from classes where studio_id = ${studio.id}`;
    expect(n!.n).toBe(0);
  });
});

/** A new studio's class that recurs every 2 days, `count` times, from 4 days on; with the studio's write call. */
async function recurringClass(count: number) {
  const { studio, write } = await studioWithKey(s);
  const ins = await instructor(s, studio.id);
  const body = classBody(ins, { startsAt: future(4), recurrence: { intervalDays: 2, count } });
  const c = await (await write('POST', '/v1/classes', body)).json();
  return { studio, write, c };
}

describe('managementUpdateClass / managementCancelClass', () => {
  test('PATCH updates fields and applies instructor and duration to future occurrences, with the same 409', async () => {
    const { studio, write } = await studioWithKey(s);
    const ana = await instructor(s, studio.id);
    const bo = await instructor(s, studio.id, 'Bo');
    const at = future(5);
    const c = await (
      await write('POST', '/v1/classes', classBody(ana, { startsAt: at, recurrence: { intervalDays: 1, count: 3 } }))
    ).json();
    // Bo already teaches during the 2nd occurrence
    const clash = await (
      await write('POST', '/v1/classes', classBody(bo, { startsAt: new Date(Date.parse(at) + DAY).toISOString() }))
    ).json();
    const patchRefused = await expectProblem(
      await write('PATCH', `/v1/classes/${c.id}`, { instructorId: bo, title: 'Renamed' }),
      409,
      'instructor_double_booked',
    );
    expect((patchRefused.conflictingOccurrence as { classId: string }).classId).toBe(clash.id);
    expect((await occurrences(c.id)).every((o) => o.instructorId === ana)).toBe(true);
    expect((await s.sql`select title from classes where id = ${c.id}`)[0]!.title).toBe('Morning Flow');
    expect((await write('DELETE', `/v1/classes/${clash.id}`)).status).toBe(200);
    const res = await write('PATCH', `/v1/classes/${c.id}`, {
      instructorId: bo,
      durationMinutes: 90,
      title: 'Renamed',
      discipline: null,
      capacity: 8,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      id: c.id,
      instructorId: bo,
      durationMinutes: 90,
      title: 'Renamed',
      discipline: null,
      capacity: 8,
    });
    expect((await occurrences(c.id)).every((o) => o.instructorId === bo && o.durationMinutes === 90)).toBe(true);
    await expectProblem(
      await write('PATCH', `/v1/classes/${c.id}`, { instructorId: 'ins_nope' }),
      422,
      'unknown_instructor',
    );
    await expectProblem(await write('PATCH', `/v1/classes/${c.id}`, { planIds: ['pln_nope'] }), 422, 'unknown_plan');
    await expectProblem(await write('PATCH', `/v1/classes/${c.id}`, { mode: 'two_way' }), 422, 'validation_failed');
  });

  test('plans the class already has change nothing, even one archived since: the record sent back with a new title is 200', async () => {
    const { studio, write } = await studioWithKey(s);
    const pln = await plan(s, studio.id);
    const c = await (
      await write('POST', '/v1/classes', classBody(await instructor(s, studio.id), { planIds: [pln] }))
    ).json();
    expect((await write('DELETE', `/v1/plans/${pln}`)).status).toBe(200);
    const res = await write('PATCH', `/v1/classes/${c.id}`, { title: 'Renamed', planIds: [pln, pln] });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ title: 'Renamed', planIds: [pln] });
    // a new one must still be live
    await expectProblem(
      await write('PATCH', `/v1/classes/${c.id}`, { planIds: [pln, 'pln_nope'] }),
      422,
      'unknown_plan',
    );
  });

  test('a path id that cannot be a class is 404 before the body is judged, and is not stored under its Idempotency-Key', async () => {
    const { studio, write } = await studioWithKey(s);
    const idem = crypto.randomUUID();
    await expectProblem(await write('PATCH', '/v1/classes/not-an-id', { title: '' }, idem), 404, 'not_found');
    // the key is still free: the same request again is judged again, and another request may take the key
    await expectProblem(await write('PATCH', '/v1/classes/not-an-id', { title: '' }, idem), 404, 'not_found');
    const c = await (await write('POST', '/v1/classes', classBody(await instructor(s, studio.id)))).json();
    expect((await write('PATCH', `/v1/classes/${c.id}`, { title: 'Renamed' }, idem)).status).toBe(200);
  });

  test("404 for an unknown class or another studio's", async () => {
    const a = await studioWithKey(s);
    const b = await studioWithKey(s);
    const c = await (await a.write('POST', '/v1/classes', classBody(await instructor(s, a.studio.id)))).json();
    await expectProblem(await b.write('PATCH', `/v1/classes/${c.id}`, { title: 'x' }), 404, 'not_found');
    await expectProblem(await b.write('DELETE', `/v1/classes/${c.id}`), 404, 'not_found');
    await expectProblem(await a.write('DELETE', '/v1/classes/cls_missing'), 404, 'not_found');
  });

  test('DELETE cancels the class and its future occurrences, frees the instructor, and answers the final state', async () => {
    const { studio, write } = await studioWithKey(s);
    const ins = await instructor(s, studio.id);
    const at = future(4);
    const c = await (
      await write('POST', '/v1/classes', classBody(ins, { startsAt: at, recurrence: { intervalDays: 2, count: 4 } }))
    ).json();
    const res = await write('DELETE', `/v1/classes/${c.id}`);
    expect(res.status).toBe(200);
    const done = await res.json();
    expect(done).toMatchObject({ id: c.id, status: 'cancelled', occurrenceCount: 0, nextOccurrenceAt: null });
    expect(done.cancelledAt).toBeString();
    expect((await occurrences(c.id)).every((o) => o.status === 'cancelled')).toBe(true);
    expect((await write('POST', '/v1/classes', classBody(ins, { startsAt: at }))).status).toBe(201);
    const again = await write('DELETE', `/v1/classes/${c.id}`);
    expect(again.status).toBe(200);
    expect((await again.json()).cancelledAt).toBe(done.cancelledAt);
    // cancelling is final: a PATCH is 409 and changes nothing, its occurrences included
    // the class's state before the values: a cancelled class is 409 even for an instructor that is not one
    for (const patch of [
      { title: 'Renamed' },
      { capacity: 3 },
      { instructorId: 'ins_nope' },
      { planIds: ['pln_nope'] },
    ]) {
      const refused = await expectProblem(await write('PATCH', `/v1/classes/${c.id}`, patch), 409, 'class_cancelled');
      expect(refused.detail).toContain('a cancelled class is final');
    }
    const [row] = await s.sql`select title from classes where id = ${c.id}`;
    expect(row!.title).toBe(c.title);
    expect(await s.sql`select 1 from occurrences where class_id = ${c.id} and capacity = 3`).toHaveLength(0);
  });

  test("a class PATCH while an occurrence's move commits: its occurrence.updated names only what the PATCH changed", async () => {
    const { studio, write, c } = await recurringClass(2);
    const [first] = await s.sql<
      { id: string }[]
    >`select id from occurrences where class_id = ${c.id} order by starts_at limit 1`;
    let patched: Promise<Response> | undefined;
    // another write moves the first occurrence an hour later and commits while the PATCH waits on it
    await s.sql.begin(async (tx) => {
      await tx`update occurrences set starts_at = starts_at + interval '1 hour', ends_at = ends_at + interval '1 hour' where id = ${first!.id}`;
      patched = write('PATCH', `/v1/classes/${c.id}`, { durationMinutes: 45 });
      await Bun.sleep(300);
    });
    expect((await patched!).status).toBe(200);
    const [event] = await s.sql<{ data: { previousAttributes: Record<string, unknown> } }[]>`
      select data from events where studio_id = ${studio.id} and type = 'occurrence.updated'
        and data->'object'->>'id' = ${first!.id}`;
    expect(Object.keys(event!.data.previousAttributes).sort()).toEqual(['durationMinutes', 'endsAt']);
  });

  test('a PATCH that changes nothing of a cancelled class leaves its cancelled occurrences as they were, and records nothing', async () => {
    const { studio, write, c } = await recurringClass(3);
    const [second] = await s.sql<{ id: string; startsAt: Date }[]>`
      select id, starts_at from occurrences where class_id = ${c.id} order by starts_at offset 1 limit 1`;
    const moved = { startsAt: second!.startsAt.toISOString(), durationMinutes: 90 };
    expect((await write('PATCH', `/v1/schedule/${second!.id}`, moved)).status).toBe(200);
    expect((await write('DELETE', `/v1/classes/${c.id}`)).status).toBe(200);
    const eventCount = async () =>
      (await s.sql<{ n: number }[]>`select count(*)::int as n from events where studio_id = ${studio.id}`)[0]!.n;
    const before = await eventCount();
    expect((await write('PATCH', `/v1/classes/${c.id}`, { durationMinutes: 60 })).status).toBe(200);
    const [row] = await s.sql<
      { durationMinutes: number }[]
    >`select duration_minutes from occurrences where id = ${second!.id}`;
    expect(row!.durationMinutes).toBe(90);
    expect(await eventCount()).toBe(before);
  });
});
