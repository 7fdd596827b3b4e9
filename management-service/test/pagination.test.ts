import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { newId } from '@studio/shared';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { classBody, future, instructor, studioWithKey } from './fixtures';

let s: Stack;
beforeAll(async () => (s = await startStack()));
afterAll(() => s.close());

/** 250 members in one statement: they share created_at, so only the id breaks ties. */
async function members(studioId: string, n: number) {
  const rows = Array.from({ length: n }, (_, i) => ({
    id: newId('member'),
    studioId,
    email: `m${i}@page.test`,
    role: 'member',
    status: 'active',
  }));
  await s.sql`insert into members ${s.sql(rows)}`;
  return rows.map((r) => r.id);
}

async function walk(
  get: (p: string) => Promise<Response>,
  path: string,
  limit: string,
  between?: (page: number) => Promise<void>,
) {
  const seen: string[] = [];
  let cursor: string | null = null;
  let pages = 0;
  do {
    const res = await get(`${path}?limit=${limit}${cursor ? `&cursor=${cursor}` : ''}`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as { data: { id: string }[]; next_cursor: string | null };
    seen.push(...page.data.map((d) => d.id));
    cursor = page.next_cursor;
    if (cursor) expect(cursor).toMatch(/^[A-Za-z0-9_.-]+$/);
    pages++;
    if (between) await between(pages);
  } while (cursor && pages < 1000);
  return { seen, pages };
}

describe('cursor pagination (docs/design/pagination.md)', () => {
  test('250 members walked with limit=7 while members are added: every original exactly once', async () => {
    const { studio, get, write } = await studioWithKey(s);
    const original = [studio.adminId, ...(await members(studio.id, 250))];
    let added = 0;
    const { seen } = await walk(get, '/v1/members', '7', async (page) => {
      if (page % 5 === 0) {
        // some sort before the current position (same created_at as the bulk), some after
        await s.sql`insert into members ${s.sql({ id: newId('member'), studioId: studio.id, email: `late${added}@page.test`, createdAt: (await s.sql`select created_at from members where id = ${original[1]!}`)[0]!.createdAt })}`;
        await write('POST', '/v1/members/invites', { email: `new${added++}@page.test` });
      }
    });
    for (const id of original) expect(seen.filter((x) => x === id).length).toBe(1);
    expect(new Set(seen).size).toBe(seen.length);
  });

  test('250 classes walked with limit=7 while classes are created between pages', async () => {
    const { studio, get, write } = await studioWithKey(s);
    const ins = await instructor(s, studio.id);
    const base = Date.parse(future(30));
    const original: string[] = [];
    for (let i = 0; i < 250; i++) {
      const c = await (
        await write('POST', '/v1/classes', classBody(ins, { startsAt: new Date(base + i * 3_600_000).toISOString() }))
      ).json();
      original.push(c.id);
    }
    let extra = 0;
    const { seen, pages } = await walk(get, '/v1/classes', '7', async () => {
      await write(
        'POST',
        '/v1/classes',
        classBody(ins, { startsAt: new Date(base - ++extra * 3_600_000).toISOString() }),
      );
    });
    expect(pages).toBeGreaterThanOrEqual(36);
    for (const id of original) expect(seen.filter((x) => x === id).length).toBe(1);
    expect(seen.slice(0, 250)).toEqual(original);
  });

  test('limit clamps: 1000 -> 100, abc -> 25, 0 -> 1, -5 -> 1, none -> 25', async () => {
    const { studio, get } = await studioWithKey(s);
    await members(studio.id, 150);
    const count = async (q: string) => ((await (await get(`/v1/members${q}`)).json()).data as unknown[]).length;
    expect(await count('?limit=1000')).toBe(100);
    expect(await count('?limit=abc')).toBe(25);
    expect(await count('?limit=0')).toBe(1);
    expect(await count('?limit=-5')).toBe(1);
    expect(await count('?limit=2.5')).toBe(25);
    expect(await count('')).toBe(25);
    expect(await count('?limit=100')).toBe(100);
    // however long the value, never an error (the spec: clamped, not rejected)
    expect(await count(`?limit=${'9'.repeat(40)}`)).toBe(100);
    expect(await count(`?limit=${'x'.repeat(5000)}`)).toBe(25);
  });

  test('an altered, foreign or made-up cursor: 400 invalid_cursor', async () => {
    const a = await studioWithKey(s);
    const b = await studioWithKey(s);
    await members(a.studio.id, 5);
    const { next_cursor } = await (await a.get('/v1/members?limit=2')).json();
    expect(next_cursor).toBeString();
    const [body, sig] = next_cursor.split('.');
    const payload = JSON.parse(Buffer.from(body, 'base64url').toString());
    payload.i = 'mem_0';
    const forged = `${Buffer.from(JSON.stringify(payload)).toString('base64url')}.${sig}`;
    const flipped = next_cursor.slice(0, -1) + (next_cursor.endsWith('A') ? 'B' : 'A');
    // however long: still the cursor's own 400, not a 422 for its length
    const long = `${'A'.repeat(3000)}.${sig}`;
    const huge = `${'A'.repeat(9000)}.${sig}`;
    for (const bad of [forged, flipped, 'abc', 'Zm9v.YmFy', `${body}.`, long, huge]) {
      await expectProblem(await a.get(`/v1/members?cursor=${encodeURIComponent(bad)}`), 400, 'invalid_cursor');
    }
    await expectProblem(await b.get(`/v1/members?cursor=${next_cursor}`), 400, 'invalid_cursor');
    await expectProblem(await a.get(`/v1/classes?cursor=${next_cursor}`), 400, 'invalid_cursor');
    expect((await a.get(`/v1/members?cursor=${next_cursor}`)).status).toBe(200);
  });

  test('a query parameter a list does not declare: 422 naming it, as its document says (the preload checks)', async () => {
    const { get } = await studioWithKey(s);
    const lists = [
      'classes',
      'members',
      'schedule',
      'content',
      'coupons',
      'instructors',
      'locations',
      'plans',
      'programs',
      'events',
    ];
    for (const list of lists) {
      const body = await expectProblem(await get(`/v1/${list}?staus=active`), 422, 'validation_failed');
      expect((body.errors as { path: string }[])[0]!.path).toBe('/query/staus');
    }
  });

  test('an empty list is { data: [], next_cursor: null }', async () => {
    const { get } = await studioWithKey(s);
    expect(await (await get('/v1/classes')).json()).toEqual({ data: [], next_cursor: null });
    expect(await (await get('/v1/schedule')).json()).toEqual({ data: [], next_cursor: null });
  });
});
