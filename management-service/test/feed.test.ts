/**
 * The feed (docs/design/events.md): GET /v1/events in an order that never changes behind a reader, so a
 * consumer resuming with `after=` misses nothing however transactions interleave; paging, `type`,
 * `after`, the key's read scopes, another studio's events; 30-day retention in batches, and 410
 * for an `after` it deleted.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { type EventResource, type EventType, encodeBase62, newId, resourceOf, SCOPES } from '@studio/shared';
import type { Event } from '@studio/shared/schemas';
import { EXAMPLES } from '@studio/shared/schemas';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { SCAN_WINDOW } from '../src/events/queries';
import { deleteExpiredEvents, startEventRetention } from '../src/events/retention';
import { event, insertEvents } from '../src/kit/events';

let s: Stack;
beforeAll(async () => (s = await startStack()));
afterAll(() => s.close());

type Page = { data: Event[]; next_cursor: string | null };
const page = async (key: string, query = ''): Promise<Page> => {
  const res = await s.mg(`/v1/events${query}`, key);
  if (res.status !== 200) throw new Error(`${res.status} ${await res.text()}`);
  return res.json();
};
const origin = { requestId: 'req_feedtest', traceId: null };

/** A realistic object for an event of `type` (the documents check every answer), with its own id when given. */
const EXAMPLE_OF: Record<EventResource, object> = {
  class: EXAMPLES.Class,
  occurrence: EXAMPLES.Occurrence,
  member: EXAMPLES.Member,
  membership: EXAMPLES.Member,
  content: EXAMPLES.Video,
  plan: EXAMPLES.Plan,
  instructor: EXAMPLES.Instructor,
  location: EXAMPLES.Location,
  room: EXAMPLES.Room,
  coupon: EXAMPLES.Coupon,
  program: EXAMPLES.Program,
};
// an update or a reschedule carries previousAttributes, as the write runner records it (the documents require it)
const ev = (type: EventType, id?: string) => ({
  ...event(type, { ...EXAMPLE_OF[resourceOf(type)], ...(id ? { id } : {}) }),
  ...(/\.(updated|rescheduled)$/.test(type) ? { previousAttributes: { createdAt: EXAMPLES.Class.createdAt } } : {}),
});

/** Records events of the given types in one transaction, as the write runner does. */
async function record(studioId: string, types: EventType[]): Promise<string[]> {
  return s.sql.begin((tx) =>
    insertEvents(
      tx,
      studioId,
      types.map((t) => ev(t)),
      origin,
    ),
  );
}

/** Every event a key sees, by following `next_cursor` from `query`. */
async function all(key: string, query = '?limit=100'): Promise<Event[]> {
  const out: Event[] = [];
  let p = await page(key, query);
  out.push(...p.data);
  while (p.next_cursor) {
    p = await page(key, `?cursor=${p.next_cursor}`);
    out.push(...p.data);
  }
  return out;
}

/** Until every transaction older than the last write has ended anywhere on the server, the feed may hold back: wait for `n`. */
async function eventually<T>(read: () => Promise<T[]>, n: number): Promise<T[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const got = await read();
    if (got.length >= n || Date.now() > deadline) return got;
    await Bun.sleep(50);
  }
}

describe('order: a reader resuming with after= misses nothing, however transactions interleave', () => {
  test('the first transaction to take its id and seq commits last: neither event is missed, and the served order never changes', async () => {
    const studio = await s.studio();
    const key = (await s.key(studio.id, 'secret', SCOPES)).key;
    const [seed] = await record(studio.id, ['instructor.created']);
    await eventually(() => all(key), 1);

    // a consumer polling throughout, resuming after the last event it handled
    const seen: string[] = [seed!];
    let polling = true;
    const consumer = (async () => {
      while (polling) {
        const p = await page(key, `?after=${seen.at(-1)}&limit=100`);
        seen.push(...p.data.map((e) => e.id));
        await Bun.sleep(10);
      }
    })();

    let releaseFirst!: () => void;
    const firstMayCommit = new Promise<void>((r) => (releaseFirst = r));
    let firstTookItsPlace!: () => void;
    const firstHasItsPlace = new Promise<void>((r) => (firstTookItsPlace = r));
    // A: takes its xid and its seq first (its event inserted), then waits; B records and commits meanwhile
    const a = s.sql.begin(async (tx) => {
      const ids = await insertEvents(tx, studio.id, [ev('plan.created', 'pln_a')], origin);
      firstTookItsPlace();
      await firstMayCommit;
      return ids[0]!;
    });
    await firstHasItsPlace;
    const [b] = await record(studio.id, ['plan.updated']);
    // B has committed, but A (older) is still running: B is not served yet
    await Bun.sleep(300);
    expect(seen).not.toContain(b);
    const served = (await all(key)).map((e) => e.id);
    expect(served).not.toContain(b);
    releaseFirst();
    const aId = await a;
    await eventually(async () => seen.filter((id) => id === aId || id === b), 2);
    polling = false;
    await consumer;
    expect(seen.filter((id) => id === aId || id === b)).toEqual([aId, b!]);
    // and a reader from the start sees the same order
    expect((await all(key)).map((e) => e.id)).toEqual([seed!, aId, b!]);
  });

  test('a transaction that took its xid first and its seq last is served first: (xid, seq), not seq alone', async () => {
    const studio = await s.studio();
    const key = (await s.key(studio.id, 'secret', SCOPES)).key;
    let release!: () => void;
    const mayInsert = new Promise<void>((r) => (release = r));
    let started!: () => void;
    const hasXid = new Promise<void>((r) => (started = r));
    const first = s.sql.begin(async (tx) => {
      await tx`select pg_current_xact_id()`; // its xid now, its seq later
      started();
      await mayInsert;
      return (await insertEvents(tx, studio.id, [ev('coupon.created', 'cpn_1')], origin))[0]!;
    });
    await hasXid;
    const [second] = await record(studio.id, ['coupon.archived']);
    await Bun.sleep(200);
    expect((await all(key)).map((e) => e.id)).toEqual([]);
    release();
    const firstId = await first;
    const [rows] =
      await s.sql`select (select seq from events where id = ${firstId}) > (select seq from events where id = ${second!}) as later`;
    expect(rows!.later).toBe(true); // its seq is the larger one
    expect((await eventually(() => all(key), 2)).map((e) => e.id)).toEqual([firstId, second!]);
  });
});

test('xids compare as numbers, not as text (9 < 10 < 100)', async () => {
  const studio = await s.studio();
  const key = (await s.key(studio.id, 'secret', SCOPES)).key;
  const row = (xid: string) => ({
    studioId: studio.id,
    id: newId('event'),
    type: 'plan.created',
    resource: 'plan',
    xid,
    data: s.sql.json({ object: EXAMPLES.Plan } as never),
    requestId: null,
    traceId: null,
  });
  // recorded by transactions long ended (ids far below any running one), the later ones first
  const rows = [row('100'), row('10'), row('9')];
  await s.sql`insert into events ${s.sql(rows)}`;
  const want = [rows[2]!.id, rows[1]!.id, rows[0]!.id];
  expect((await eventually(() => all(key), 3)).map((e) => e.id)).toEqual(want);
  expect((await all(key, '?limit=1')).map((e) => e.id)).toEqual(want);
  expect((await all(key, '?limit=1&type=plan.created')).map((e) => e.id)).toEqual(want);
  expect((await page(key, `?after=${want[0]}`)).data.map((e) => e.id)).toEqual(want.slice(1));
});

describe('the list', () => {
  let studioId: string;
  let key: string;
  let ids: string[];
  const TYPES: EventType[] = [
    'class.created',
    'occurrence.created',
    'occurrence.created',
    'member.invited',
    'plan.created',
    'class.cancelled',
    'coupon.created',
  ];
  beforeAll(async () => {
    studioId = (await s.studio()).id;
    key = (await s.key(studioId, 'secret', SCOPES)).key;
    ids = [];
    for (const t of TYPES) ids.push(...(await record(studioId, [t])));
    await eventually(() => all(key), TYPES.length);
  });

  test('oldest first, paged 25 by default and at most 100, next_cursor null at the end', async () => {
    const first = await page(key);
    expect(first.data.map((e) => e.id)).toEqual(ids);
    expect(first.next_cursor).toBeNull();
    expect(first.data[0]).toEqual({
      id: ids[0]!,
      type: 'class.created',
      createdAt: expect.stringMatching(/Z$/),
      data: { object: expect.any(Object) },
      requestId: 'req_feedtest',
    } as never);
    const many = await s.studio();
    const manyKey = (await s.key(many.id, 'secret', ['plans:read'])).key;
    await s.sql.begin((tx) =>
      insertEvents(
        tx,
        many.id,
        Array.from({ length: 130 }, (_, i) => ev('plan.created', `pln_${i}`)),
        origin,
      ),
    );
    await eventually(() => all(manyKey), 130);
    expect((await page(manyKey)).data).toHaveLength(25);
    expect((await page(manyKey, '?limit=1000')).data).toHaveLength(100);
    expect((await all(manyKey, '?limit=7')).map((e) => (e.data.object as { id: string }).id)).toEqual(
      Array.from({ length: 130 }, (_, i) => `pln_${i}`),
    );
  });

  test('paging by cursor: every event once, in order', async () => {
    expect((await all(key, '?limit=2')).map((e) => e.id)).toEqual(ids);
  });

  test('after=<id>: only the events after it; a cursor wins over after', async () => {
    expect((await page(key, `?after=${ids[2]}`)).data.map((e) => e.id)).toEqual(ids.slice(3));
    expect((await page(key, `?after=${ids.at(-1)}`)).data).toEqual([]);
    const p1 = await page(key, `?after=${ids[0]}&limit=2`);
    expect(p1.data.map((e) => e.id)).toEqual(ids.slice(1, 3));
    expect((await page(key, `?cursor=${p1.next_cursor}&after=${ids[5]}`)).data.map((e) => e.id)).toEqual(ids.slice(3));
  });

  test('type: one, or a comma-separated list; the cursor carries it; an unknown type is 422', async () => {
    expect((await all(key, '?type=occurrence.created')).map((e) => e.id)).toEqual([ids[1]!, ids[2]!]);
    expect((await all(key, '?type=coupon.created,class.created&limit=1')).map((e) => e.id)).toEqual([ids[0]!, ids[6]!]);
    const p = await page(key, '?type=occurrence.created&limit=1');
    await expectProblem(
      await s.mg(`/v1/events?cursor=${p.next_cursor}&type=class.created`, key),
      400,
      'invalid_cursor',
    );
    expect((await page(key, `?cursor=${p.next_cursor}&type=occurrence.created`)).data.map((e) => e.id)).toEqual([
      ids[2]!,
    ]);
    const bad = await expectProblem(await s.mg('/v1/events?type=class.exploded', key), 422, 'validation_failed');
    expect(JSON.stringify(bad.errors)).toContain('/query/type');
    await expectProblem(await s.mg('/v1/events?type=Class', key), 422, 'validation_failed');
    // a name that is no type, in a list or alone, is named, with the types listed
    for (const q of ['type=plan.created,bogus', 'type=bogus']) {
      const named = await expectProblem(await s.mg(`/v1/events?${q}`, key), 422, 'validation_failed');
      expect(named.errors).toEqual([
        {
          path: '/query/type',
          message: expect.stringMatching(/^bogus is not an event type; types are class\.created, /),
        },
      ]);
    }
    // empty is no filter, as left out
    expect((await all(key, '?type=')).map((e) => e.id)).toEqual((await all(key)).map((e) => e.id));
  });

  test('a key sees the events of what it may read: the list is filtered, the others are 404', async () => {
    const classesOnly = (await s.key(studioId, 'secret', ['classes:read'])).key;
    expect((await all(classesOnly)).map((e) => e.type)).toEqual(['class.created', 'class.cancelled']);
    const members = (await s.key(studioId, 'secret', ['members:read', 'coupons:write'])).key;
    expect((await all(members)).map((e) => e.id)).toEqual([ids[3]!]);
    const res = await s.mg(`/v1/events/${ids[1]}`, classesOnly); // an occurrence event needs schedule:read
    await expectProblem(res, 404, 'not_found');
    expect((await s.mg(`/v1/events/${ids[0]}`, classesOnly)).status).toBe(200);
    // after an event the key may not read: 404, as if it did not exist
    await expectProblem(await s.mg(`/v1/events?after=${ids[1]}`, classesOnly), 404, 'not_found');
    // a type filter and the scope filter together
    expect((await all(classesOnly, '?type=class.cancelled,occurrence.created')).map((e) => e.id)).toEqual([ids[5]!]);
  });

  test("GET /v1/events/{id}: the event as listed; another studio's, a made-up or a malformed id is 404", async () => {
    const listed = (await page(key)).data[3];
    const res = await s.mg(`/v1/events/${ids[3]}`, key);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual(listed as never);
    const other = await s.studio();
    const otherKey = (await s.key(other.id, 'secret', SCOPES)).key;
    await expectProblem(await s.mg(`/v1/events/${ids[3]}`, otherKey), 404, 'not_found');
    await expectProblem(await s.mg(`/v1/events?after=${ids[3]}`, otherKey), 404, 'not_found');
    expect((await page(otherKey)).data).toEqual([]);
    await expectProblem(await s.mg(`/v1/events/${newId('event')}`, key), 404, 'not_found');
    await expectProblem(await s.mg('/v1/events/evt_!!', key), 404, 'not_found');
    await expectProblem(await s.mg(`/v1/events?after=${newId('event')}`, key), 404, 'not_found');
    await expectProblem(await s.mg('/v1/events?after=cls_abc', key), 404, 'not_found');
  });

  test('a filtered page reads a bounded stretch: fewer events than limit, yet a cursor, until the end', async () => {
    const studio = await s.studio();
    const k = (await s.key(studio.id, 'secret', SCOPES)).key;
    await s.sql.begin((tx) =>
      insertEvents(
        tx,
        studio.id,
        [
          ...Array.from({ length: SCAN_WINDOW + 5 }, () => ev('plan.created', 'pln_x')),
          ev('coupon.created', 'cpn_rare'),
        ],
        origin,
      ),
    );
    await eventually(() => all(k, '?type=coupon.created'), 1);
    const first = await page(k, '?type=coupon.created');
    expect(first.data).toEqual([]);
    expect(first.next_cursor).not.toBeNull();
    const second = await page(k, `?cursor=${first.next_cursor}`);
    expect(second.data.map((e) => (e.data.object as { id: string }).id)).toEqual(['cpn_rare']);
    expect(second.next_cursor).toBeNull();
  });
});

describe('retention', () => {
  test('a run with nothing past the retention records no cutoff: an old id that never was is 404, not 410', async () => {
    const studio = await s.studio();
    const key = (await s.key(studio.id, 'secret', SCOPES)).key;
    await record(studio.id, ['instructor.created']);
    expect(await deleteExpiredEvents(s.sql, { retentionMs: 3_600_000 })).toBe(0);
    // an event id made two hours ago (past the retention told above), of no event
    const made = Bun.randomUUIDv7('buffer', Date.now() - 7_200_000);
    const never = `evt_${encodeBase62(BigInt(`0x${made.toString('hex')}`), 22)}`;
    await expectProblem(await s.mg(`/v1/events?after=${never}`, key), 404, 'not_found');
  });

  test('events past the retention are deleted in batches; after= one of them, or one kept within the hour after the cutoff, is 410 events_expired; others are kept', async () => {
    const studio = await s.studio();
    const key = (await s.key(studio.id, 'secret', SCOPES)).key;
    const [gone] = await record(studio.id, ['instructor.created']);
    await s.sql.begin((tx) =>
      insertEvents(
        tx,
        studio.id,
        Array.from({ length: 9 }, () => ev('instructor.updated', 'ins_x')),
        origin,
      ),
    );
    const [kept] = await record(studio.id, ['instructor.created']);
    await s.sql`update events set created_at = now() - interval '2 hours' where studio_id = ${studio.id} and id <> ${kept!}`;
    await eventually(() => all(key), 11);
    expect((await page(key, `?after=${gone}`)).data).toHaveLength(10);

    // in batches: a run told to stop after its first statement has deleted one batch; the next run the rest
    expect(await deleteExpiredEvents(s.sql, { retentionMs: 3_600_000, batch: 4, stopping: () => true })).toBe(4);
    expect(await deleteExpiredEvents(s.sql, { retentionMs: 3_600_000, batch: 4 })).toBe(6);
    expect((await all(key)).map((e) => e.id)).toEqual([kept!]);
    const expired = await expectProblem(await s.mg(`/v1/events?after=${gone}`, key), 410, 'events_expired');
    expect(expired.detail).toContain(gone!);
    expect(expired.type).toEndWith('/docs/problems#events_expired');
    // the kept event was made within the hour after the cutoff: one deleted may follow it in the feed, so 410 too
    await expectProblem(await s.mg(`/v1/events?after=${kept}`, key), 410, 'events_expired');
    // an hour and more after the cutoff, it resumes
    await s.sql`update events_retention set deleted_before = now() - interval '2 hours'`;
    expect((await page(key, `?after=${kept}`)).data).toEqual([]);
    // nothing older left: a second run deletes nothing
    expect(await deleteExpiredEvents(s.sql, { retentionMs: 3_600_000 })).toBe(0);
  });

  test('one replica at a time: while another holds the lock, a run does nothing', async () => {
    const other = await s.sql.reserve();
    try {
      await other`select pg_advisory_lock(hashtextextended('studio events retention', 0))`;
      expect(await deleteExpiredEvents(s.sql, { retentionMs: 1 })).toBeNull();
    } finally {
      await other`select pg_advisory_unlock(hashtextextended('studio events retention', 0))`;
      other.release();
    }
  });

  test('the periodic job runs the retention and stops cleanly', async () => {
    const studio = await s.studio();
    const [old] = await record(studio.id, ['coupon.created']);
    await s.sql`update events set created_at = now() - interval '3 days' where id = ${old!}`;
    const job = startEventRetention(s.sql, { everyMs: 20, retentionMs: 86_400_000 });
    const deadline = Date.now() + 10_000;
    while ((await s.sql`select 1 from events where id = ${old!}`).length && Date.now() < deadline) await Bun.sleep(20);
    await job.stop();
    expect(await s.sql`select 1 from events where id = ${old!}`).toHaveLength(0);
  });
});
