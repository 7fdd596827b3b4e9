/**
 * The outbox (docs/design/events.md): every write of the operations table records exactly the events its row
 * declares, with the resource as its GET returns it and, on updates, the old values of what changed;
 * a replayed, refused, rolled-back or no-op write records none; a process killed between commit and
 * reply still has its events, once. Writes go through the gateway; events are read back through
 * the feed (a consumer resuming with `after=`) and, for "none", from the table itself.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type Caller, isWrite, newId, OPERATIONS, operation, SCOPES, signedHeaders } from '@studio/shared';
import type { OperationContext } from '@studio/shared/io';
import { serviceKit, verifiedCaller } from '@studio/shared/io';
import type { Event } from '@studio/shared/schemas';
import { Elysia } from 'elysia';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { event } from '../src/kit/events';
import { writeGuard } from '../src/kit/guard';
import { runWrite, writeHooks } from '../src/kit/write';
import { classBody, DAY, future, instructor, mgWrite } from './fixtures';

let s: Stack;
let studioId: string;
let key: string;
beforeAll(async () => {
  s = await startStack();
  studioId = (await s.studio()).id;
  key = (await s.key(studioId, 'secret', SCOPES)).key;
});
afterAll(() => s.close());

type Json = Record<string, any>;
const write = (method: string, path: string, body?: unknown, idem?: string, extra?: Record<string, string>) =>
  mgWrite(s, method, path, key, body, idem, extra);
const get = async (path: string): Promise<Json> => {
  const res = await s.mg(path, key);
  expect(res.status).toBe(200);
  return res.json();
};
const json = async (res: Response, status = 200): Promise<Json> => {
  if (res.status !== status) throw new Error(`expected ${status}, got ${res.status} ${await res.text()}`);
  return res.json();
};

/** A consumer of the feed: resumes with `after=` the last event it handled, as an integrator would. */
const consumed: Event[] = [];
async function poll() {
  for (;;) {
    const last = consumed.at(-1)?.id;
    const page = await json(await s.mg(`/v1/events?limit=100${last ? `&after=${last}` : ''}`, key));
    consumed.push(...page.data);
    if (!page.next_cursor) return;
  }
}
/** The events a request recorded, as the feed serves them (waiting, briefly, for older transactions anywhere to end). */
async function served(requestId: string, count: number): Promise<Event[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    await poll();
    const mine = consumed.filter((e) => e.requestId === requestId);
    if (mine.length >= count || Date.now() > deadline) return mine;
    await Bun.sleep(50);
  }
}
const recordedCount = async () =>
  Number((await s.sql`select count(*)::int as n from events where studio_id = ${studioId}`)[0]!.n);

interface Expected {
  type: string;
  object: unknown;
  previousAttributes?: Record<string, unknown>;
}
const ev = (type: string, object: unknown, previousAttributes?: Record<string, unknown>): Expected => ({
  type,
  object,
  ...(previousAttributes ? { previousAttributes } : {}),
});

/** What each write emitted, by operation (the walk at the end holds them to the table). */
const seen = new Map<string, Set<string>>();

/** The write's events, as recorded and as the feed serves them, are exactly `expected`, in order. */
async function expectEvents(
  opId: string,
  res: Response,
  expected: Expected[] | ((answer: Json) => Promise<Expected[]>),
) {
  expect(res.status).toBeLessThan(300);
  const answer = await res.clone().json();
  const want = typeof expected === 'function' ? await expected(answer) : expected;
  const requestId = res.headers.get('x-request-id')!;
  const rows = await s.sql<{ id: string; type: string; resource: string }[]>`
    select id, type, resource from events where studio_id = ${studioId} and request_id = ${requestId} order by xid, seq`;
  const feed = await served(requestId, rows.length);
  expect(feed.map((e) => e.id)).toEqual(rows.map((r) => r.id));
  expect(feed.map((e) => ({ type: e.type, data: e.data }))).toEqual(
    want.map((e) => ({
      type: e.type,
      data: e.previousAttributes
        ? { object: e.object, previousAttributes: e.previousAttributes }
        : { object: e.object },
    })) as never,
  );
  for (const e of feed) {
    expect(e.id).toMatch(/^evt_[0-9A-Za-z]{22}$/);
    expect(e.createdAt).toMatch(/Z$/);
  }
  for (const r of rows) expect(r.resource).toBe(r.type.split('.')[0]!);
  const op = operation(opId as never);
  const types = seen.get(opId) ?? new Set<string>();
  for (const e of feed) types.add(e.type);
  seen.set(opId, types);
  expect(OPERATIONS.some((o) => o.id === opId && isWrite(o))).toBe(true);
  expect(op).toBeDefined();
  return answer;
}

describe('every write records exactly its events', () => {
  const ids: Record<string, string> = {};
  let ins1: string;
  beforeAll(async () => {
    ins1 = await instructor(s, studioId, 'Mira');
  });

  test('instructors: created, updated (with what changed)', async () => {
    const created = await expectEvents(
      'managementCreateInstructor',
      await write('POST', '/v1/instructors', { name: 'Ana Ruiz', disciplines: ['pilates'] }),
      async (a) => [ev('instructor.created', await get(`/v1/instructors/${a.id}`))],
    );
    ids.instructor = created.id;
    await expectEvents(
      'managementUpdateInstructor',
      await write('PATCH', `/v1/instructors/${created.id}`, {
        name: 'Ana R.',
        bio: 'Pilates since 2010',
        disciplines: ['pilates'],
      }),
      async () => [
        ev('instructor.updated', await get(`/v1/instructors/${created.id}`), { name: 'Ana Ruiz', bio: null }),
      ],
    );
  });

  test('plans: created, updated, archived', async () => {
    const plan = await expectEvents(
      'managementCreatePlan',
      await write('POST', '/v1/plans', {
        name: 'Drop-in',
        type: 'drop_in',
        config: { priceCents: 1500, currency: 'USD' },
      }),
      async (a) => [ev('plan.created', await get(`/v1/plans/${a.id}`))],
    );
    ids.plan = plan.id;
    await expectEvents(
      'managementUpdatePlan',
      await write('PATCH', `/v1/plans/${plan.id}`, {
        name: 'Single class',
        config: { priceCents: 1800, currency: 'USD' },
      }),
      async () => [
        ev('plan.updated', await get(`/v1/plans/${plan.id}`), {
          name: 'Drop-in',
          config: { priceCents: 1500, currency: 'USD' },
        }),
      ],
    );
    await expectEvents('managementArchivePlan', await write('DELETE', `/v1/plans/${plan.id}`), async () => [
      ev('plan.archived', await get(`/v1/plans/${plan.id}`)),
    ]);
  });

  test('locations and rooms: created, updated, deleted; a location delete also deletes (and tells) each room', async () => {
    const loc = await expectEvents(
      'managementCreateLocation',
      await write('POST', '/v1/locations', { name: 'Kreuzberg' }),
      async (a) => [ev('location.created', await get(`/v1/locations/${a.id}`))],
    );
    ids.location = (await json(await write('POST', '/v1/locations', { name: 'Mitte' }), 201)).id; // the one that stays
    await expectEvents(
      'managementUpdateLocation',
      await write('PATCH', `/v1/locations/${loc.id}`, { name: 'Kreuzberg Studio' }),
      async () => [ev('location.updated', await get(`/v1/locations/${loc.id}`), { name: 'Kreuzberg' })],
    );
    const roomA = await expectEvents(
      'managementCreateRoom',
      await write('POST', `/v1/locations/${loc.id}/rooms`, { name: 'Sun Room' }),
      async (a) => [ev('room.created', await get(`/v1/locations/${loc.id}/rooms/${a.id}`))],
    );
    const roomB = await json(
      await write('POST', `/v1/locations/${loc.id}/rooms`, { name: 'Moon Room', capacity: 8 }),
      201,
    );
    await expectEvents(
      'managementUpdateRoom',
      await write('PATCH', `/v1/locations/${loc.id}/rooms/${roomA.id}`, { capacity: 20 }),
      async () => [ev('room.updated', await get(`/v1/locations/${loc.id}/rooms/${roomA.id}`), { capacity: null })],
    );
    const roomC = await json(await write('POST', `/v1/locations/${loc.id}/rooms`, { name: 'Store' }), 201);
    // deleted: 404 afterwards, so the object is the answer, the record in its final state
    await expectEvents(
      'managementDeleteRoom',
      await write('DELETE', `/v1/locations/${loc.id}/rooms/${roomC.id}`),
      async (a) => [ev('room.deleted', { ...a, status: 'deleted' })],
    );
    const liveA = await get(`/v1/locations/${loc.id}/rooms/${roomA.id}`);
    await expectEvents('managementDeleteLocation', await write('DELETE', `/v1/locations/${loc.id}`), async (a) => {
      const gone = { status: 'deleted', deletedAt: a.deletedAt, updatedAt: a.deletedAt };
      return [
        ev('location.deleted', a),
        ev('room.deleted', { ...liveA, ...gone }),
        ev('room.deleted', { ...roomB, ...gone }),
      ];
    });
  });

  test('classes: a recurring create tells each occurrence; an update and a cancel tell the future occurrences they change', async () => {
    const body = {
      ...classBody(ins1, { startsAt: future(3), capacity: 10 }),
      recurrence: { intervalDays: 7, count: 3 },
    };
    const occurrencesOf = async (classId: string) => (await get(`/v1/schedule?classId=${classId}`)).data as Json[];
    const klass = await expectEvents('managementCreateClass', await write('POST', '/v1/classes', body), async (a) => [
      ev('class.created', await get(`/v1/classes/${a.id}`)),
      ...(await occurrencesOf(a.id)).map((o) => ev('occurrence.created', o)),
    ]);
    expect(seen.get('managementCreateClass')!.size).toBe(2);
    const before = await occurrencesOf(klass.id);
    expect(before).toHaveLength(3);
    await expectEvents(
      'managementUpdateClass',
      await write('PATCH', `/v1/classes/${klass.id}`, { title: 'Evening Flow', capacity: 12 }),
      async () => [
        ev('class.updated', await get(`/v1/classes/${klass.id}`), { title: 'Morning Flow', capacity: 10 }),
        ...(await occurrencesOf(klass.id)).map((o) => ev('occurrence.updated', o, { capacity: 10 })),
      ],
    );
    const [first] = await occurrencesOf(klass.id);
    const moved = new Date(Date.parse(first!.startsAt) + DAY / 2).toISOString();
    await expectEvents(
      'managementRescheduleOccurrence',
      await write('PATCH', `/v1/schedule/${first!.id}`, { startsAt: moved }),
      async () => [
        ev('occurrence.rescheduled', await get(`/v1/schedule/${first!.id}`), {
          startsAt: first!.startsAt,
          endsAt: first!.endsAt,
        }),
      ],
    );
    await expectEvents('managementCancelClass', await write('DELETE', `/v1/classes/${klass.id}`), async () => [
      ev('class.cancelled', await get(`/v1/classes/${klass.id}`)),
      ...(await occurrencesOf(klass.id)).map((o) => ev('occurrence.cancelled', o)),
    ]);
  });

  test('members: invited, updated, membership cancelled', async () => {
    const m = await expectEvents(
      'managementInviteMember',
      await write('POST', '/v1/members/invites', { email: 'Jo@Example.com', name: 'Jo' }),
      async (a) => [ev('member.invited', await get(`/v1/members/${a.id}`))],
    );
    await expectEvents(
      'managementUpdateMember',
      await write('PATCH', `/v1/members/${m.id}`, { name: 'Joanna', role: 'member' }),
      async () => [ev('member.updated', await get(`/v1/members/${m.id}`), { name: 'Jo' })],
    );
    await expectEvents('managementCancelMembership', await write('POST', `/v1/members/${m.id}/cancel`), async () => [
      ev('membership.cancelled', await get(`/v1/members/${m.id}`)),
    ]);
  });

  test('content: updated, deleted', async () => {
    const id = newId('content');
    await s.sql`insert into content ${s.sql({ id, studioId, title: 'Morning flow', durationSeconds: 1800 })}`;
    ids.content = id;
    const before = await get(`/v1/content/${id}`);
    await expectEvents(
      'managementUpdateContent',
      await write('PATCH', `/v1/content/${id}`, { title: 'Morning flow (30 min)', visibility: before.visibility }),
      async () => [ev('content.updated', await get(`/v1/content/${id}`), { title: 'Morning flow' })],
    );
    await expectEvents('managementDeleteContent', await write('DELETE', `/v1/content/${id}`), async (a) => [
      ev('content.deleted', a),
    ]);
  });

  test('coupons: created, archived', async () => {
    const c = await expectEvents(
      'managementCreateCoupon',
      await write('POST', '/v1/coupons', { code: 'SPRING20', config: { kind: 'percent', percentOff: 20 } }),
      async (a) => [ev('coupon.created', await get(`/v1/coupons/${a.id}`))],
    );
    await expectEvents('managementArchiveCoupon', await write('DELETE', `/v1/coupons/${c.id}`), async () => [
      ev('coupon.archived', await get(`/v1/coupons/${c.id}`)),
    ]);
  });

  test('programs: created, updated', async () => {
    const p = await expectEvents(
      'managementCreateProgram',
      await write('POST', '/v1/programs', { name: 'Beginners' }),
      async (a) => [ev('program.created', await get(`/v1/programs/${a.id}`))],
    );
    await expectEvents(
      'managementUpdateProgram',
      await write('PATCH', `/v1/programs/${p.id}`, {
        name: "Beginners' month",
        pricing: 'paid',
        priceCents: 4900,
        currency: 'USD',
      }),
      async () => [
        ev('program.updated', await get(`/v1/programs/${p.id}`), {
          name: 'Beginners',
          pricing: 'free',
          priceCents: null,
          currency: null,
        }),
      ],
    );
  });

  test('the walk: every write of the table was made above and emitted exactly the types its row declares', () => {
    const writes = OPERATIONS.filter(isWrite);
    expect(writes.length).toBeGreaterThan(20);
    for (const o of writes) {
      const declared = 'emits' in o ? [...o.emits].sort() : [];
      expect({ op: o.id, emitted: [...(seen.get(o.id) ?? [])].sort() }).toEqual({ op: o.id, emitted: declared });
    }
  });
});

describe('nothing is recorded for what did not change anything', () => {
  test('an idempotent replay never runs the action again', async () => {
    const res = await write('POST', '/v1/instructors', { name: 'Replay' }, 'replay-key');
    expect(res.status).toBe(201);
    const n = await recordedCount();
    const again = await write('POST', '/v1/instructors', { name: 'Replay' }, 'replay-key');
    expect(again.headers.get('idempotent-replayed')).toBe('true');
    expect(await recordedCount()).toBe(n);
  });

  test('refused writes (404, 422, 409) and a rolled-back double-booking record nothing', async () => {
    const ins = await instructor(s, studioId, 'Busy');
    const startsAt = future(10);
    await json(await write('POST', '/v1/classes', classBody(ins, { startsAt })), 201);
    const n = await recordedCount();
    await expectProblem(
      await write('PATCH', `/v1/instructors/${newId('instructor')}`, { name: 'x' }),
      404,
      'not_found',
    );
    await expectProblem(await write('POST', '/v1/classes', classBody(newId('instructor'))), 422, 'unknown_instructor');
    await expectProblem(
      await write('POST', '/v1/plans', { name: 'Bad', type: 'drop_in', config: { priceCents: -1, currency: 'USD' } }),
      422,
      'invalid_plan_config',
    );
    // the second occurrence of a recurring class clashes: the class, its first occurrence and their events roll back together
    await expectProblem(
      await write('POST', '/v1/classes', {
        ...classBody(ins, { startsAt: new Date(Date.parse(startsAt) - 7 * DAY).toISOString() }),
        recurrence: { intervalDays: 7, count: 2 },
      }),
      409,
      'instructor_double_booked',
    );
    expect(await recordedCount()).toBe(n);
  });

  test('a PATCH to the values the record has, and a second cancel or archive: 200, no event, updatedAt unchanged', async () => {
    const ins = await instructor(s, studioId, 'Same');
    const plan = await json(
      await write('POST', '/v1/plans', {
        name: 'Pack',
        type: 'class_pack',
        config: { priceCents: 9000, currency: 'USD', classCount: 10, validityDays: 90 },
      }),
      201,
    );
    const loc = await json(
      await write('POST', '/v1/locations', {
        name: 'Annex',
        timezone: 'UTC',
        address: { line1: '1 Main St', city: 'Berlin', country: 'DE' },
      }),
      201,
    );
    const room = await json(await write('POST', `/v1/locations/${loc.id}/rooms`, { name: 'R', capacity: 5 }), 201);
    const plan2 = await json(
      await write('POST', '/v1/plans', { name: 'Drop', type: 'drop_in', config: { priceCents: 900, currency: 'USD' } }),
      201,
    );
    const klass = await json(
      await write('POST', '/v1/classes', {
        ...classBody(ins, { startsAt: future(20), capacity: 8, planIds: [plan2.id] }),
        recurrence: { intervalDays: 1, count: 2 },
      }),
      201,
    );
    const member = await json(
      await write('POST', '/v1/members/invites', { email: 'same@example.com', name: 'Sam' }),
      201,
    );
    const coupon = await json(
      await write('POST', '/v1/coupons', { code: 'SAME10', config: { kind: 'percent', percentOff: 10 } }),
      201,
    );
    const program = await json(
      await write('POST', '/v1/programs', { name: 'P', pricing: 'paid', priceCents: 100, currency: 'USD' }),
      201,
    );
    const instructorRec = await json(
      await write('POST', '/v1/instructors', { name: 'Ivy', disciplines: ['yin'] }),
      201,
    );
    const video = newId('content');
    await s.sql`insert into content ${s.sql({ id: video, studioId, title: 'Calm', durationSeconds: 600 })}`;
    await json(await write('DELETE', `/v1/classes/${klass.id}`));
    await json(await write('DELETE', `/v1/plans/${plan.id}`));
    await json(await write('DELETE', `/v1/coupons/${coupon.id}`));
    await json(await write('POST', `/v1/members/${member.id}/cancel`));
    const occ = (await get(`/v1/schedule?classId=${klass.id}`)).data[0];
    const live = await json(await write('POST', '/v1/classes', classBody(ins, { startsAt: future(30) })), 201);
    const liveOcc = (await get(`/v1/schedule?classId=${live.id}`)).data[0];
    const n = await recordedCount();

    const sameAs = async (path: string, method: string, body?: unknown) => {
      const beforeRes = await s.mg(path, key);
      const before = beforeRes.status === 200 ? await beforeRes.json() : null;
      const answer = await json(await write(method, method === 'POST' ? `${path}/cancel` : path, body));
      if (before) expect({ path, updatedAt: answer.updatedAt }).toEqual({ path, updatedAt: before.updatedAt });
    };
    await sameAs(`/v1/instructors/${instructorRec.id}`, 'PATCH', { name: 'Ivy', disciplines: ['yin'] });
    await sameAs(`/v1/instructors/${instructorRec.id}`, 'PATCH', {});
    await sameAs(`/v1/plans/${plan.id}`, 'PATCH', {
      name: 'Pack',
      config: { classCount: 10, validityDays: 90, currency: 'USD', priceCents: 9000 },
    });
    await sameAs(`/v1/plans/${plan.id}`, 'DELETE');
    await sameAs(`/v1/coupons/${coupon.id}`, 'DELETE');
    await sameAs(`/v1/locations/${loc.id}`, 'PATCH', {
      name: 'Annex',
      timezone: 'utc',
      address: { country: 'DE', city: 'Berlin', line1: '1 Main St' },
    });
    await sameAs(`/v1/locations/${loc.id}/rooms/${room.id}`, 'PATCH', { name: 'R', capacity: 5 });
    await sameAs(`/v1/classes/${klass.id}`, 'PATCH', {
      title: 'Morning Flow',
      capacity: 8,
      planIds: [plan2.id, plan2.id],
    });
    await sameAs(`/v1/classes/${klass.id}`, 'DELETE');
    await sameAs(`/v1/classes/${live.id}`, 'PATCH', { instructorId: ins, durationMinutes: 60 });
    await sameAs(`/v1/members/${member.id}`, 'PATCH', { name: 'Sam', role: 'member' });
    await sameAs(`/v1/members/${member.id}`, 'POST');
    await sameAs(`/v1/content/${video}`, 'PATCH', { title: 'Calm' });
    await sameAs(`/v1/programs/${program.id}`, 'PATCH', { name: 'P', priceCents: 100 });
    await sameAs(`/v1/schedule/${liveOcc.id}`, 'PATCH', { startsAt: liveOcc.startsAt, durationMinutes: 60 });
    expect(occ.status).toBe('cancelled');
    expect(await recordedCount()).toBe(n);
  });
});

describe("crash, trace, metric and the runner's own check", () => {
  test('a process killed between commit and reply: the events are there, once, and the retry replays', async () => {
    const before = await recordedCount();
    writeHooks.afterCommit = () => {
      throw new Error('simulated crash between commit and reply');
    };
    let lost: Response;
    try {
      lost = await write('POST', '/v1/instructors', { name: 'Crash' }, 'crash-key');
    } finally {
      writeHooks.afterCommit = undefined;
    }
    expect(lost.status).toBe(500);
    const rows =
      await s.sql`select id, data from events where studio_id = ${studioId} and type = 'instructor.created' and data->'object'->>'name' = 'Crash'`;
    expect(rows).toHaveLength(1);
    const retry = await write('POST', '/v1/instructors', { name: 'Crash' }, 'crash-key');
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect((await retry.json()).id).toBe((rows[0]!.data as Json).object.id);
    expect(await recordedCount()).toBe(before + 1);
    await poll();
    expect(
      consumed.filter((e) => e.type === 'instructor.created' && (e.data.object as Json).name === 'Crash'),
    ).toHaveLength(1);
  });

  test("an event carries its request id, and the trace id of the write's traceparent", async () => {
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    const res = await write('POST', '/v1/instructors', { name: 'Traced' }, undefined, {
      traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
    });
    expect(res.status).toBe(201);
    const [row] =
      await s.sql`select request_id, trace_id from events where studio_id = ${studioId} and request_id = ${res.headers.get('x-request-id')}`;
    expect(row).toEqual({ requestId: res.headers.get('x-request-id'), traceId });
  });

  test('studio_events_recorded_total{type} counts committed events', async () => {
    const text = await (await s.metrics.management.response()).text();
    const count = (type: string) =>
      Number(
        new RegExp(`^studio_events_recorded_total\\{type="${type.replace('.', '\\.')}"\\} (\\d+)`, 'm').exec(
          text,
        )?.[1] ?? 0,
      );
    const [row] = await s.sql`select count(*)::int as n from events where type = 'instructor.created'`;
    expect(count('instructor.created')).toBe(row!.n);
    expect(count('occurrence.created')).toBeGreaterThanOrEqual(3);
  });

  test("the runner refuses (500, nothing committed) an event type the operation's row does not declare", async () => {
    const op = operation('managementCreateInstructor');
    const deps = { config: s.config, sql: s.sql, redis: null };
    const record = {
      id: newId('instructor'),
      name: 'Stray',
      email: null,
      bio: null,
      photoUrl: null,
      disciplines: [],
      active: true,
      createdAt: new Date().toISOString(),
      updatedAt: new Date().toISOString(),
    };
    const app = (emit: string) =>
      new Elysia()
        .use(serviceKit({ name: 'management', surface: 'management', config: s.config, sql: s.sql, redis: null }))
        .use(writeGuard)
        .post('/v1/instructors', ({ request, set }) =>
          runWrite(
            deps,
            {
              operation: op,
              caller: verifiedCaller(request),
              request,
              set,
              params: {},
              query: {},
              body: { name: 'Stray' },
            } as unknown as OperationContext<typeof op>,
            async () => ({ record, events: [event(emit as 'instructor.created', record)] }),
          ),
        );
    const post = (emit: string, idem: string) => {
      const caller: Caller = {
        studioId,
        keyId: 'key_x',
        scopes: [...SCOPES],
        operationId: op.id,
        requestId: `req_stray_${idem}`,
      };
      const body = JSON.stringify({ name: 'Stray' });
      return app(emit).handle(
        new Request('http://localhost/v1/instructors', {
          method: 'POST',
          body,
          headers: {
            ...signedHeaders(s.config.GATEWAY_SECRET, 'POST', '/v1/instructors', caller, Date.now(), {
              body,
              idempotencyKey: idem,
            }),
            'content-type': 'application/json',
            'idempotency-key': idem,
          },
        }),
      );
    };
    const n = await recordedCount();
    await expectProblem(await post('class.created', 'stray-1'), 500, 'internal_error');
    expect(await recordedCount()).toBe(n);
    expect(
      await s.sql`select 1 from idempotency_records where studio_id = ${studioId} and key = 'stray-1'`,
    ).toHaveLength(0);
    expect((await post('instructor.created', 'stray-2')).status).toBe(201);
    expect(await recordedCount()).toBe(n + 1);
  });
});
