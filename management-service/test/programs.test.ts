import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { newId } from '@studio/shared';
import { Program, ProgramPage } from '@studio/shared/schemas';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { mgWrite, twoStudios } from './fixtures';

let s: Stack;
let key: string;
let otherKey: string;
let studioId: string;
let otherStudioId: string;
beforeAll(async () => {
  s = await startStack();
  ({ studioId, otherStudioId, key, otherKey } = await twoStudios(s, ['programs:read', 'programs:write']));
});
afterAll(() => s.close());

const write = (method: string, path: string, k: string, body?: unknown) => mgWrite(s, method, path, k, body);
const create = async (k: string, body: Record<string, unknown>) => {
  const res = await write('POST', '/v1/programs', k, body);
  expect(res.status).toBe(201);
  return (await res.json()) as Program;
};
/** A class row straight in SQL (classes have their own API, not under test here). */
async function classOf(studio: string): Promise<string> {
  const instructorId = newId('instructor');
  const classId = newId('class');
  await s.sql`insert into instructors ${s.sql({ id: instructorId, studioId: studio, name: 'Teacher' })}`;
  await s.sql`insert into classes ${s.sql({ id: classId, studioId: studio, title: 'Flow', mode: 'broadcast', instructorId, startsAt: new Date(Date.now() + 86_400_000), durationMinutes: 60 })}`;
  return classId;
}

describe('programs', () => {
  test('create free and paid: 201 + Location; get by id; list', async () => {
    const classId = await classOf(studioId);
    const res = await write('POST', '/v1/programs', key, {
      name: '30-day challenge',
      description: 'Daily',
      pricing: 'paid',
      priceCents: 4900,
      currency: 'USD',
      classIds: [classId],
    });
    expect(res.status).toBe(201);
    const paid = await res.json();
    expect(Value.Check(Program, paid)).toBe(true);
    expect(paid).toMatchObject({
      name: '30-day challenge',
      description: 'Daily',
      pricing: 'paid',
      priceCents: 4900,
      currency: 'USD',
      classIds: [classId],
      status: 'active',
    });
    expect(paid.id).toMatch(/^prg_/);
    expect(res.headers.get('location')).toBe(`/v1/programs/${paid.id}`);

    const free = await create(key, { name: 'Intro', pricing: 'free' });
    expect(free).toMatchObject({ pricing: 'free', priceCents: null, currency: null, classIds: [] });
    expect((await create(key, { name: 'Default free' })).pricing).toBe('free');

    const got = await s.mg(`/v1/programs/${paid.id}`, key);
    expect(got.status).toBe(200);
    expect(await got.json()).toEqual(paid);
    const list = await (await s.mg('/v1/programs', key)).json();
    expect(Value.Check(ProgramPage, list)).toBe(true);
    expect(list.data.map((p: Program) => p.id)).toEqual(expect.arrayContaining([paid.id, free.id]));
  });

  test('422 invalid_price on create', async () => {
    for (const body of [
      { name: 'P', pricing: 'paid' },
      { name: 'P', pricing: 'paid', priceCents: 1000 },
      { name: 'P', pricing: 'paid', currency: 'USD' },
      { name: 'P', pricing: 'paid', priceCents: 0, currency: 'USD' },
      { name: 'P', pricing: 'paid', priceCents: -5, currency: 'USD' },
      { name: 'P', pricing: 'free', priceCents: 1000, currency: 'USD' },
      { name: 'P', pricing: 'free', currency: 'USD' },
      { name: 'P', priceCents: 100 },
    ]) {
      await expectProblem(await write('POST', '/v1/programs', key, body), 422, 'invalid_price');
    }
    expect((await s.sql`select 1 from programs where name = 'P'`).length).toBe(0);
  });

  test('422 validation_failed: schema, unknown currency, classIds not of this studio', async () => {
    const theirClass = await classOf(otherStudioId);
    const mine = await classOf(studioId);
    for (const body of [
      {},
      { name: '' },
      { name: 'V', pricing: 'donation' },
      { name: 'V', pricing: 'paid', priceCents: 10.5, currency: 'USD' },
      { name: 'V', pricing: 'paid', priceCents: 100, currency: 'usd' },
      { name: 'V', pricing: 'paid', priceCents: 100, currency: 'ZZZ' },
      { name: 'V', level: 'hard' },
      { name: 'V', classIds: 'cls_x' },
    ]) {
      await expectProblem(await write('POST', '/v1/programs', key, body), 422, 'validation_failed');
    }
    const p = await expectProblem(
      await write('POST', '/v1/programs', key, { name: 'V', classIds: [mine, theirClass, 'cls_nope'] }),
      422,
      'validation_failed',
    );
    expect((p.errors as { path: string }[]).map((e) => e.path)).toEqual(['/body/classIds/1', '/body/classIds/2']);
    const program = await create(key, { name: 'W' });
    await expectProblem(
      await write('PATCH', `/v1/programs/${program.id}`, key, { classIds: [theirClass] }),
      422,
      'validation_failed',
    );
  });

  test('PATCH: 200; the merged result must satisfy the price rule', async () => {
    const program = await create(key, { name: 'Course', pricing: 'paid', priceCents: 1000, currency: 'EUR' });
    const res = await write('PATCH', `/v1/programs/${program.id}`, key, { priceCents: 1500, name: 'Course+' });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(Value.Check(Program, body)).toBe(true);
    expect(body).toMatchObject({ id: program.id, name: 'Course+', pricing: 'paid', priceCents: 1500, currency: 'EUR' });
    // paid -> free without clearing the price, and clearing the price of a paid program
    await expectProblem(
      await write('PATCH', `/v1/programs/${program.id}`, key, { pricing: 'free' }),
      422,
      'invalid_price',
    );
    await expectProblem(
      await write('PATCH', `/v1/programs/${program.id}`, key, { priceCents: null }),
      422,
      'invalid_price',
    );
    await expectProblem(
      await write('PATCH', `/v1/programs/${program.id}`, key, { priceCents: 0 }),
      422,
      'invalid_price',
    );
    const [row] = await s.sql`select pricing, price_cents, currency from programs where id = ${program.id}`;
    expect(row).toEqual({ pricing: 'paid', priceCents: 1500, currency: 'EUR' });
    const freed = await (
      await write('PATCH', `/v1/programs/${program.id}`, key, { pricing: 'free', priceCents: null, currency: null })
    ).json();
    expect(freed).toMatchObject({ pricing: 'free', priceCents: null, currency: null });
    // free -> paid needs a price
    await expectProblem(
      await write('PATCH', `/v1/programs/${program.id}`, key, { pricing: 'paid' }),
      422,
      'invalid_price',
    );
    const classId = await classOf(studioId);
    const paidAgain = await (
      await write('PATCH', `/v1/programs/${program.id}`, key, {
        pricing: 'paid',
        priceCents: 800,
        currency: 'GBP',
        classIds: [classId],
      })
    ).json();
    expect(paidAgain).toMatchObject({ pricing: 'paid', priceCents: 800, currency: 'GBP', classIds: [classId] });
  });

  test('archived and restored with PATCH status: the record says so, and the list still holds it', async () => {
    const p = await create(key, { name: 'Teacher training' });
    expect(p.status).toBe('active');
    const archived = await write('PATCH', `/v1/programs/${p.id}`, key, { status: 'archived' });
    expect(archived.status).toBe(200);
    expect((await archived.json()).status).toBe('archived');
    expect((await (await s.mg(`/v1/programs/${p.id}`, key)).json()).status).toBe('archived');
    const restored = await write('PATCH', `/v1/programs/${p.id}`, key, { status: 'active' });
    expect((await restored.json()).status).toBe('active');
    await expectProblem(
      await write('PATCH', `/v1/programs/${p.id}`, key, { status: 'gone' }),
      422,
      'validation_failed',
    );
  });

  test("another studio's program is 404 for GET and PATCH, and unchanged", async () => {
    const theirs = await create(otherKey, { name: 'Theirs' });
    await expectProblem(await s.mg(`/v1/programs/${theirs.id}`, key), 404, 'not_found');
    await expectProblem(await write('PATCH', `/v1/programs/${theirs.id}`, key, { name: 'Mine' }), 404, 'not_found');
    await expectProblem(await s.mg('/v1/programs/prg_missing', key), 404, 'not_found');
    const [row] = await s.sql`select name from programs where id = ${theirs.id}`;
    expect(row!.name).toBe('Theirs');
    const list = await (await s.mg('/v1/programs', key)).json();
    expect(list.data.map((p: Program) => p.id)).not.toContain(theirs.id);
  });
});
