/**
 * Every Management list pages by cursor (docs/design/pagination.md): default 25, `limit` clamped to
 * 1..100, keyset order (createdAt, id) — schedule (startsAt, id) — with records added
 * between pages neither repeated nor skipping others, and signed cursors that only the
 * list (and studio, and location) that made them accept.
 *
 * Each list gets its own studio, seeded in bulk with SQL: ties on the sort column (three
 * rows share each instant) so only the id orders them, microsecond offsets on some rows so
 * a cursor that rounded to milliseconds would skip or repeat, and soft-deleted rows in the
 * lists that hide them. The expected order is Postgres's own `order by <column>, id`.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { newId, SCOPES } from '@studio/shared';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { DAY, future, HOUR, instructor } from './fixtures';

let s: Stack;
beforeAll(async () => (s = await startStack()));
afterAll(() => s.close());

const SEEDED = 130; // > 100, so even the largest page has a next one
let seq = 0;
const uniq = () => `${Date.now().toString(36)}${(seq++).toString(36)}`.toUpperCase();

/** A studio of its own for one list, an all-scopes key, and what its rows hang on. */
interface Ctx {
  studioId: string;
  key: string;
  instructorId: string;
  classId: string;
  locationId: string;
}
/** One row to seed: its sort value and whether it is soft-deleted (where the table has that). */
interface Spec {
  at: Date;
  dead?: boolean;
}

interface ListCase {
  name: string;
  table: string;
  /** `created_at`, or `starts_at` for the schedule. */
  column: 'created_at' | 'starts_at';
  /** The JSON field of the sort column, to check the order the answer shows. */
  field: 'createdAt' | 'startsAt';
  /** Rows the list shows (besides `studio_id`): the live ones. */
  live: string;
  /** Some of the seeded rows are soft-deleted. */
  softDeletes?: boolean;
  path(c: Ctx): string;
  /** Inserts one row per spec and returns their ids. */
  seed(c: Ctx, specs: Spec[]): Promise<string[]>;
}

async function insert(table: string, rows: Record<string, unknown>[]): Promise<string[]> {
  for (let i = 0; i < rows.length; i += 500) await s.sql`insert into ${s.sql(table)} ${s.sql(rows.slice(i, i + 500))}`;
  return rows.map((r) => r.id as string);
}

const LISTS: ListCase[] = [
  {
    name: 'classes',
    table: 'classes',
    column: 'created_at',
    field: 'createdAt',
    live: 'true',
    path: () => '/v1/classes',
    seed: (c, specs) =>
      insert(
        'classes',
        specs.map(({ at }) => ({
          id: newId('class'),
          studioId: c.studioId,
          title: 'Flow',
          mode: 'broadcast',
          instructorId: c.instructorId,
          startsAt: new Date(Date.now() + 30 * DAY),
          durationMinutes: 60,
          createdAt: at,
          updatedAt: at,
        })),
      ),
  },
  {
    name: 'members',
    table: 'members',
    column: 'created_at',
    field: 'createdAt',
    live: 'true',
    path: () => '/v1/members',
    seed: (c, specs) =>
      insert(
        'members',
        specs.map(({ at }) => ({
          id: newId('member'),
          studioId: c.studioId,
          email: `p${uniq().toLowerCase()}@paging.test`,
          role: 'member',
          status: 'active',
          createdAt: at,
          updatedAt: at,
        })),
      ),
  },
  {
    // one instructor per occurrence, so equal start times never double-book
    name: 'schedule',
    table: 'occurrences',
    column: 'starts_at',
    field: 'startsAt',
    live: 'true',
    path: () => '/v1/schedule',
    async seed(c, specs) {
      const teachers = await insert(
        'instructors',
        specs.map(() => ({ id: newId('instructor'), studioId: c.studioId, name: 'T' })),
      );
      return insert(
        'occurrences',
        specs.map(({ at }, i) => ({
          id: newId('occurrence'),
          studioId: c.studioId,
          classId: c.classId,
          instructorId: teachers[i],
          startsAt: at,
          endsAt: new Date(at.getTime() + HOUR),
          durationMinutes: 60,
        })),
      );
    },
  },
  {
    name: 'content',
    table: 'content',
    column: 'created_at',
    field: 'createdAt',
    live: 'deleted_at is null',
    softDeletes: true,
    path: () => '/v1/content',
    seed: (c, specs) =>
      insert(
        'content',
        specs.map(({ at, dead }) => ({
          id: newId('content'),
          studioId: c.studioId,
          title: 'Video',
          durationSeconds: 60,
          deletedAt: dead ? at : null,
          createdAt: at,
          updatedAt: at,
        })),
      ),
  },
  {
    name: 'coupons',
    table: 'coupons',
    column: 'created_at',
    field: 'createdAt',
    live: 'true',
    path: () => '/v1/coupons',
    seed: (c, specs) =>
      insert(
        'coupons',
        specs.map(({ at }, i) => ({
          id: newId('coupon'),
          studioId: c.studioId,
          code: `PG${uniq()}`,
          config: s.sql.json({ kind: 'percent', percentOff: 10 }),
          status: i % 7 === 3 ? 'archived' : 'active',
          createdAt: at,
          updatedAt: at,
        })),
      ),
  },
  {
    name: 'instructors',
    table: 'instructors',
    column: 'created_at',
    field: 'createdAt',
    live: 'true',
    path: () => '/v1/instructors',
    seed: (c, specs) =>
      insert(
        'instructors',
        specs.map(({ at }, i) => ({
          id: newId('instructor'),
          studioId: c.studioId,
          name: `I${i}`,
          active: i % 5 !== 2,
          createdAt: at,
          updatedAt: at,
        })),
      ),
  },
  {
    name: 'locations',
    table: 'locations',
    column: 'created_at',
    field: 'createdAt',
    live: "status = 'live'",
    softDeletes: true,
    path: () => '/v1/locations',
    seed: (c, specs) =>
      insert(
        'locations',
        specs.map(({ at, dead }) => ({
          id: newId('location'),
          studioId: c.studioId,
          name: 'L',
          timezone: 'UTC',
          status: dead ? 'deleted' : 'live',
          deletedAt: dead ? at : null,
          createdAt: at,
          updatedAt: at,
        })),
      ),
  },
  {
    name: 'rooms',
    table: 'rooms',
    column: 'created_at',
    field: 'createdAt',
    live: "status = 'live'",
    softDeletes: true,
    path: (c) => `/v1/locations/${c.locationId}/rooms`,
    seed: (c, specs) =>
      insert(
        'rooms',
        specs.map(({ at, dead }) => ({
          id: newId('room'),
          studioId: c.studioId,
          locationId: c.locationId,
          name: 'R',
          capacity: 10,
          status: dead ? 'deleted' : 'live',
          deletedAt: dead ? at : null,
          createdAt: at,
          updatedAt: at,
        })),
      ),
  },
  {
    name: 'plans',
    table: 'plans',
    column: 'created_at',
    field: 'createdAt',
    live: 'true',
    path: () => '/v1/plans',
    seed: (c, specs) =>
      insert(
        'plans',
        specs.map(({ at }, i) => ({
          id: newId('plan'),
          studioId: c.studioId,
          name: 'P',
          type: 'drop_in',
          config: s.sql.json({ priceCents: 1500, currency: 'USD' }),
          status: i % 6 === 1 ? 'archived' : 'active',
          createdAt: at,
          updatedAt: at,
        })),
      ),
  },
  {
    name: 'programs',
    table: 'programs',
    column: 'created_at',
    field: 'createdAt',
    live: 'true',
    path: () => '/v1/programs',
    seed: (c, specs) =>
      insert(
        'programs',
        specs.map(({ at }) => ({
          id: newId('program'),
          studioId: c.studioId,
          name: 'G',
          pricing: 'free',
          createdAt: at,
          updatedAt: at,
        })),
      ),
  },
];

/** A studio, its key, an instructor, a class and a live location (the rooms' one). */
async function context(): Promise<Ctx> {
  const { id: studioId } = await s.studio();
  const { key } = await s.key(studioId, 'secret', SCOPES);
  const instructorId = await instructor(s, studioId);
  const classId = newId('class');
  await s.sql`insert into classes ${s.sql({ id: classId, studioId, title: 'Host', mode: 'broadcast', instructorId, startsAt: new Date(future(60)), durationMinutes: 60 })}`;
  const locationId = newId('location');
  await s.sql`insert into locations ${s.sql({ id: locationId, studioId, name: 'Host', timezone: 'UTC' })}`;
  return { studioId, key, instructorId, classId, locationId };
}

/** `n` rows, three to an instant, one in ten soft-deleted where the list hides those; then µs offsets on a quarter. */
async function seed(l: ListCase, c: Ctx, n = SEEDED): Promise<void> {
  const base = l.column === 'starts_at' ? Date.now() + 10 * DAY : Date.now() - 10 * DAY;
  const ids = await l.seed(
    c,
    Array.from({ length: n }, (_, i) => ({
      at: new Date(base + Math.floor(i / 3) * 60_000),
      dead: !!l.softDeletes && i % 10 === 9,
    })),
  );
  const jittered = ids.filter((_, i) => i % 4 === 1);
  const us = jittered.map((_, i) => 1 + ((i * 7919) % 999));
  const col = s.sql(l.column);
  await s.sql`
    update ${s.sql(l.table)} t set ${col} = t.${col} + x.us * interval '1 microsecond'
      ${l.column === 'starts_at' ? s.sql`, ends_at = t.ends_at + x.us * interval '1 microsecond'` : s.sql``}
    from unnest(${jittered}::text[], ${us}::int[]) as x(id, us) where t.id = x.id`;
}

/** The ids the list must show, in Postgres's order of (column, id). */
async function truth(l: ListCase, c: Ctx): Promise<string[]> {
  const where = l.name === 'rooms' ? s.sql`and location_id = ${c.locationId}` : s.sql``;
  const rows = await s.sql<{ id: string }[]>`
    select id from ${s.sql(l.table)} where studio_id = ${c.studioId} ${where} and ${s.sql.unsafe(l.live)} order by ${s.sql(l.column)}, id`;
  return rows.map((r) => r.id);
}

type PageBody = { data: Record<string, string>[]; next_cursor: string | null };
async function page(c: Ctx, path: string): Promise<PageBody> {
  const res = await s.mg(path, c.key);
  if (res.status !== 200) throw new Error(`GET ${path}: ${res.status} ${await res.text()}`);
  return (await res.json()) as PageBody;
}
const withQuery = (path: string, q: string) => `${path}${path.includes('?') ? '&' : '?'}${q}`;

/** Follows `next_cursor` to the end; `between(n)` runs after page n. */
async function walk(l: ListCase, c: Ctx, limit: number, between?: (n: number) => Promise<void>) {
  const items: Record<string, string>[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const p = await page(
      c,
      withQuery(l.path(c), `limit=${limit}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`),
    );
    expect(p.data.length).toBeLessThanOrEqual(limit);
    if (p.next_cursor !== null) {
      expect(p.data).toHaveLength(limit);
      expect(p.next_cursor).toMatch(/^[A-Za-z0-9_.~-]+$/); // URL-safe as it stands
    }
    items.push(...p.data);
    cursor = p.next_cursor;
    pages++;
    if (between) await between(pages);
  } while (cursor && pages < 500);
  return { items, ids: items.map((d) => d.id!), pages };
}

/** A cursor from the first page of `path`, limit 2. */
async function cursorOf(c: Ctx, path: string): Promise<string> {
  const p = await page(c, withQuery(path, 'limit=2'));
  expect(p.next_cursor).toBeString();
  return p.next_cursor!;
}

const ctxs = new Map<string, Ctx>();
beforeAll(async () => {
  for (const l of LISTS) {
    const c = await context();
    await seed(l, c);
    ctxs.set(l.name, c);
  }
});

describe('every Management list pages by cursor (docs/design/pagination.md)', () => {
  for (const l of LISTS) {
    describe(l.name, () => {
      test('limit: default 25, 0 -> 1, -5 -> 1, 500 -> 100, abc -> 25, 2.5 -> 25, 100 -> 100', async () => {
        const c = ctxs.get(l.name)!;
        const count = async (q: string) => {
          const p = await page(c, q ? withQuery(l.path(c), q) : l.path(c));
          expect(p.next_cursor).toBeString();
          return p.data.length;
        };
        expect(await count('')).toBe(25);
        expect(await count('limit=0')).toBe(1);
        expect(await count('limit=-5')).toBe(1);
        expect(await count('limit=500')).toBe(100);
        expect(await count('limit=abc')).toBe(25);
        expect(await count('limit=2.5')).toBe(25);
        expect(await count('limit=100')).toBe(100);
        expect(await count('limit=1')).toBe(1);
      });

      test(`walking next_cursor visits every record once, in (${l.field}, id) order`, async () => {
        const c = ctxs.get(l.name)!;
        const expected = await truth(l, c);
        expect(expected.length).toBeGreaterThan(100);
        for (const limit of [7, 25, 100]) {
          const { items, ids, pages } = await walk(l, c, limit);
          expect(ids).toEqual(expected);
          expect(pages).toBe(Math.ceil(expected.length / limit));
          const shown = items.map((d) => d[l.field]!);
          expect(shown).toEqual([...shown].sort()); // ISO UTC ms text sorts as time
        }
        // the default page size walks the same
        const first = await page(c, l.path(c));
        expect(first.data.map((d) => d.id)).toEqual(expected.slice(0, 25));
        const second = await page(c, withQuery(l.path(c), `cursor=${encodeURIComponent(first.next_cursor!)}`));
        expect(second.data.map((d) => d.id)).toEqual(expected.slice(25, 50));
      });

      test('records added between pages neither repeat nor make others skip', async () => {
        const c = await context();
        await seed(l, c, 60);
        const expected = await truth(l, c);
        const before: string[] = [];
        const after: string[] = [];
        const { ids } = await walk(l, c, 7, async (n) => {
          if (n !== 2 && n !== 4) return;
          // one sorting before every record (behind the cursor), one after every record (ahead of it),
          // and one at the same instant as the record the cursor stands on
          const far = l.column === 'starts_at' ? 200 * DAY : 100 * DAY;
          before.push(...(await l.seed(c, [{ at: new Date(Date.now() - far - n * HOUR) }])));
          after.push(...(await l.seed(c, [{ at: new Date(Date.now() + far + n * HOUR) }])));
          const [near] = await s.sql<{ at: Date }[]>`
            select ${s.sql(l.column)} as at from ${s.sql(l.table)} where id = ${expected[n * 7 - 1]!}`;
          await l.seed(c, [{ at: near!.at }]);
        });
        expect(new Set(ids).size).toBe(ids.length);
        const originals = new Set(expected);
        expect(ids.filter((id) => originals.has(id))).toEqual(expected);
        for (const id of before) expect(ids).not.toContain(id);
        for (const id of after) expect(ids.filter((x) => x === id)).toHaveLength(1);
      });

      test('an altered cursor, or one made by another list or studio: 400 invalid_cursor', async () => {
        const c = ctxs.get(l.name)!;
        const cursor = await cursorOf(c, l.path(c));
        const [body, sig] = cursor.split('.') as [string, string];
        const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
        const forged = (change: (p: Record<string, unknown>) => void) => {
          const p = structuredClone(payload);
          change(p);
          return `${Buffer.from(JSON.stringify(p)).toString('base64url')}.${sig}`;
        };
        const altered = [
          cursor.slice(0, -1) + (cursor.endsWith('A') ? 'B' : 'A'), // signature
          (body.startsWith('e') ? 'f' : 'e') + cursor.slice(1), // payload
          forged((p) => {
            p.i = `${String(p.i)}0`;
          }),
          forged((p) => {
            p.k = '1970-01-01T00:00:00.000000Z';
          }),
          `${body}.`,
          cursor + cursor,
          'abc',
          'Zm9v.YmFy',
          '.',
          '%00',
        ];
        for (const bad of altered) {
          await expectProblem(
            await s.mg(withQuery(l.path(c), `cursor=${encodeURIComponent(bad)}`), c.key),
            400,
            'invalid_cursor',
          );
        }
        // every other list of the same studio refuses it (the cursor is checked before any query, so empty lists too)
        for (const other of LISTS.filter((o) => o !== l)) {
          await expectProblem(
            await s.mg(withQuery(other.path(c), `cursor=${encodeURIComponent(cursor)}`), c.key),
            400,
            'invalid_cursor',
          );
        }
        // and so does the same list of another studio
        const otherStudio = await context();
        await expectProblem(
          await s.mg(withQuery(l.path(otherStudio), `cursor=${encodeURIComponent(cursor)}`), otherStudio.key),
          400,
          'invalid_cursor',
        );
        // the genuine one still works
        expect((await page(c, withQuery(l.path(c), `cursor=${encodeURIComponent(cursor)}`))).data.length).toBe(25);
      });

      test('a fresh studio: one page, next_cursor null; an empty list is { data: [], next_cursor: null }', async () => {
        const c = await context();
        const expected = await truth(l, c);
        // a fresh context has its admin member, an instructor, a class and a location: those lists hold one
        const p = await page(c, l.path(c));
        expect(p.data.map((d) => d.id)).toEqual(expected);
        expect(p.next_cursor).toBeNull();
        if (!expected.length) expect(p).toEqual({ data: [], next_cursor: null });
      });
    });
  }

  test("rooms: a cursor of one location's rooms is refused on another's; a deleted location's rooms are 404", async () => {
    const c = ctxs.get('rooms')!;
    const cursor = await cursorOf(c, `/v1/locations/${c.locationId}/rooms`);
    const other = newId('location');
    await s.sql`insert into locations ${s.sql({ id: other, studioId: c.studioId, name: 'Other', timezone: 'UTC' })}`;
    await LISTS.find((l) => l.name === 'rooms')!.seed({ ...c, locationId: other }, [
      { at: new Date() },
      { at: new Date() },
      { at: new Date() },
    ]);
    await expectProblem(
      await s.mg(`/v1/locations/${other}/rooms?cursor=${encodeURIComponent(cursor)}`, c.key),
      400,
      'invalid_cursor',
    );
    expect((await page(c, `/v1/locations/${other}/rooms?limit=2`)).data).toHaveLength(2);

    await s.sql`update locations set status = 'deleted', deleted_at = now() where id = ${other}`;
    await expectProblem(await s.mg(`/v1/locations/${other}/rooms`, c.key), 404, 'not_found');
    const theirs = await context();
    await expectProblem(await s.mg(`/v1/locations/${theirs.locationId}/rooms`, c.key), 404, 'not_found');
  });

  test('schedule: a cursor keeps its filters; other filters with it are 400 invalid_cursor', async () => {
    const c = ctxs.get('schedule')!;
    const from = new Date(Date.now() + 10 * DAY + 20 * 60_000).toISOString();
    const all = await truth(LISTS.find((l) => l.name === 'schedule')!, c);
    const rows = await s.sql<
      { id: string }[]
    >`select id from occurrences where studio_id = ${c.studioId} and starts_at >= ${from} order by starts_at, id`;
    expect(rows.length).toBeLessThan(all.length);
    const first = await page(c, `/v1/schedule?from=${from}&limit=10`);
    const rest = await page(c, `/v1/schedule?limit=100&cursor=${encodeURIComponent(first.next_cursor!)}`);
    expect([...first.data, ...rest.data].map((d) => d.id)).toEqual(
      rows.slice(0, 10 + rest.data.length).map((r) => r.id),
    );
    await expectProblem(
      await s.mg(
        `/v1/schedule?from=${new Date(Date.now() + DAY).toISOString()}&cursor=${encodeURIComponent(first.next_cursor!)}`,
        c.key,
      ),
      400,
      'invalid_cursor',
    );
  });
});
