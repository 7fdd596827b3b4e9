import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import type { Occurrence } from '@studio/shared/schemas';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { classBody, DAY, future, instructor, studioWithKey } from './fixtures';

let s: Stack;
beforeAll(async () => (s = await startStack()));
afterAll(() => s.close());

describe('schedule', () => {
  test('lists occurrences by startsAt with from/to/classId/instructorId filters', async () => {
    const { studio, write, get } = await studioWithKey(s);
    const ana = await instructor(s, studio.id);
    const bo = await instructor(s, studio.id, 'Bo');
    const at = future(2);
    const a = await (
      await write('POST', '/v1/classes', classBody(ana, { startsAt: at, recurrence: { intervalDays: 1, count: 5 } }))
    ).json();
    const b = await (await write('POST', '/v1/classes', classBody(bo, { startsAt: at, title: 'Bo class' }))).json();
    const all = await (await get('/v1/schedule')).json();
    expect(all.data.length).toBe(6);
    expect(all.next_cursor).toBeNull();
    const starts = all.data.map((o: Occurrence) => o.startsAt);
    expect([...starts].sort()).toEqual(starts);
    const first = all.data.find((o: Occurrence) => o.classId === a.id);
    expect(first).toMatchObject({
      title: 'Morning Flow',
      mode: 'broadcast',
      instructorId: ana,
      durationMinutes: 60,
      status: 'scheduled',
      startsAt: at,
    });
    expect(first.endsAt).toBe(new Date(Date.parse(at) + 3_600_000).toISOString());
    expect((await (await get(`/v1/schedule?classId=${b.id}`)).json()).data.length).toBe(1);
    expect((await (await get(`/v1/schedule?instructorId=${ana}`)).json()).data.length).toBe(5);
    const from = new Date(Date.parse(at) + DAY).toISOString();
    const to = new Date(Date.parse(at) + 3 * DAY).toISOString();
    const window = await (
      await get(`/v1/schedule?from=${encodeURIComponent(from)}&to=${encodeURIComponent(to)}`)
    ).json();
    expect(window.data.map((o: Occurrence) => o.startsAt)).toEqual([
      from,
      new Date(Date.parse(at) + 2 * DAY).toISOString(),
    ]);
    await expectProblem(await get('/v1/schedule?from=yesterday'), 422, 'validation_failed');
  });

  test('a cursor keeps its filters; other filters with it are 400 invalid_cursor', async () => {
    const { studio, write, get } = await studioWithKey(s);
    const ana = await instructor(s, studio.id);
    const bo = await instructor(s, studio.id, 'Bo');
    await write('POST', '/v1/classes', classBody(ana, { recurrence: { intervalDays: 1, count: 5 } }));
    await write('POST', '/v1/classes', classBody(bo, { recurrence: { intervalDays: 1, count: 5 } }));
    const p1 = await (await get(`/v1/schedule?instructorId=${ana}&limit=2`)).json();
    expect(p1.next_cursor).toBeString();
    const p2 = await (await get(`/v1/schedule?limit=10&cursor=${p1.next_cursor}`)).json();
    expect(p2.data.length).toBe(3);
    expect(p2.data.every((o: Occurrence) => o.instructorId === ana)).toBe(true);
    await expectProblem(await get(`/v1/schedule?instructorId=${bo}&cursor=${p1.next_cursor}`), 400, 'invalid_cursor');
    await expectProblem(await get(`/v1/classes?cursor=${p1.next_cursor}`), 400, 'invalid_cursor');
  });

  test('reschedule: 200 with the moved occurrence, 404, 409 cancelled, 422 past, 409 double-booked', async () => {
    const a = await studioWithKey(s);
    const b = await studioWithKey(s);
    const ana = await instructor(s, a.studio.id);
    const at = future(6);
    const c = await (
      await a.write('POST', '/v1/classes', classBody(ana, { startsAt: at, recurrence: { intervalDays: 1, count: 2 } }))
    ).json();
    const occ = (await (await a.get(`/v1/schedule?classId=${c.id}`)).json()).data as Occurrence[];
    const to = future(9);
    const res = await a.write('PATCH', `/v1/schedule/${occ[0]!.id}`, { startsAt: to, durationMinutes: 45 });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({
      id: occ[0]!.id,
      startsAt: to,
      durationMinutes: 45,
      endsAt: new Date(Date.parse(to) + 45 * 60_000).toISOString(),
    });
    const clash = await expectProblem(
      await a.write('PATCH', `/v1/schedule/${occ[1]!.id}`, {
        startsAt: new Date(Date.parse(to) + 10 * 60_000).toISOString(),
      }),
      409,
      'instructor_double_booked',
    );
    expect(clash.conflictingOccurrence).toEqual({
      id: occ[0]!.id,
      classId: c.id,
      startsAt: to,
      endsAt: new Date(Date.parse(to) + 45 * 60_000).toISOString(),
    });
    await expectProblem(
      await a.write('PATCH', `/v1/schedule/${occ[1]!.id}`, { startsAt: new Date(Date.now() - DAY).toISOString() }),
      422,
      'occurrence_in_past',
    );
    await expectProblem(
      await a.write('PATCH', `/v1/schedule/${occ[1]!.id}`, { startsAt: 'soon' }),
      422,
      'validation_failed',
    );
    await expectProblem(
      await b.write('PATCH', `/v1/schedule/${occ[1]!.id}`, { startsAt: future(11) }),
      404,
      'not_found',
    );
    await expectProblem(await a.write('PATCH', '/v1/schedule/occ_missing', { startsAt: future(11) }), 404, 'not_found');
    await a.write('DELETE', `/v1/classes/${c.id}`);
    await expectProblem(
      await a.write('PATCH', `/v1/schedule/${occ[1]!.id}`, { startsAt: future(12) }),
      409,
      'occurrence_cancelled',
    );
  });

  test('an occurrence that has started is history: a cancelled class keeps it, and it cannot be moved back to life', async () => {
    const a = await studioWithKey(s);
    const ana = await instructor(s, a.studio.id);
    const c = await (
      await a.write(
        'POST',
        '/v1/classes',
        classBody(ana, { startsAt: future(6), recurrence: { intervalDays: 1, count: 2 } }),
      )
    ).json();
    const [held] = (await (await a.get(`/v1/schedule?classId=${c.id}`)).json()).data as Occurrence[];
    // it took place an hour ago (as time would have made it)
    await s.sql`update occurrences set starts_at = now() - interval '1 hour', ends_at = now() where id = ${held!.id}`;
    expect((await a.write('DELETE', `/v1/classes/${c.id}`)).status).toBe(200);
    const past = await expectProblem(
      await a.write('PATCH', `/v1/schedule/${held!.id}`, { startsAt: future(8) }),
      422,
      'occurrence_in_past',
    );
    expect(past.detail).toContain('already started');
    expect((await (await a.get(`/v1/schedule/${held!.id}`)).json()).status).toBe('scheduled');
  });
});
