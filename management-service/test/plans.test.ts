import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { Plan, PlanPage } from '@studio/shared/schemas';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { mgWrite, twoStudios } from './fixtures';

let s: Stack;
let key: string;
let otherKey: string;
beforeAll(async () => {
  s = await startStack();
  ({ key, otherKey } = await twoStudios(s, ['plans:read', 'plans:write']));
});
afterAll(() => s.close());

const write = (method: string, path: string, k: string, body?: unknown) => mgWrite(s, method, path, k, body);

const membership = { priceCents: 9900, currency: 'USD', interval: 'month' };
const classPack = { priceCents: 12000, currency: 'EUR', classCount: 10, validityDays: 90 };
const dropIn = { priceCents: 2000, currency: 'GBP' };
const create = async (k: string, body: Record<string, unknown>) => {
  const res = await write('POST', '/v1/plans', k, body);
  expect(res.status).toBe(201);
  return (await res.json()) as Plan;
};

describe('plans', () => {
  test('create each type: 201 + Location, membership defaults filled in', async () => {
    const res = await write('POST', '/v1/plans', key, {
      name: 'Unlimited',
      type: 'membership',
      config: membership,
      description: 'All classes',
    });
    expect(res.status).toBe(201);
    const plan = await res.json();
    expect(Value.Check(Plan, plan)).toBe(true);
    expect(plan).toMatchObject({
      name: 'Unlimited',
      type: 'membership',
      description: 'All classes',
      visibility: 'public',
      status: 'active',
      archivedAt: null,
      config: { ...membership, intervalCount: 1, classesPerInterval: null },
    });
    expect(plan.id).toMatch(/^pln_/);
    expect(res.headers.get('location')).toBe(`/v1/plans/${plan.id}`);
    expect(
      (await create(key, { name: '10 pack', type: 'class_pack', config: classPack, visibility: 'private' })).config,
    ).toEqual(classPack);
    expect((await create(key, { name: 'Drop in', type: 'drop_in', config: dropIn })).config).toEqual(dropIn);
    expect(
      (
        await create(key, {
          name: '8 a month',
          type: 'membership',
          config: { ...membership, intervalCount: 3, classesPerInterval: 8 },
        })
      ).config,
    ).toEqual({ ...membership, intervalCount: 3, classesPerInterval: 8 });
  });

  test('422 invalid_plan_config with errors: missing, extra, out-of-range, wrong-type field', async () => {
    const cases: [string, unknown, string][] = [
      ['membership', { priceCents: 100, currency: 'USD' }, '/body/config/interval'],
      ['membership', { ...membership, classCount: 5 }, '/body/config/classCount'],
      ['membership', { ...membership, intervalCount: 13 }, '/body/config/intervalCount'],
      ['membership', { ...membership, classesPerInterval: 0 }, '/body/config/classesPerInterval'],
      ['membership', { ...membership, interval: 'day' }, '/body/config/interval'],
      ['class_pack', { ...classPack, classCount: 1001 }, '/body/config/classCount'],
      ['class_pack', { ...classPack, validityDays: 0 }, '/body/config/validityDays'],
      ['class_pack', { priceCents: 100, currency: 'USD', classCount: 5 }, '/body/config/validityDays'],
      ['drop_in', { ...dropIn, priceCents: -1 }, '/body/config/priceCents'],
      ['drop_in', { ...dropIn, priceCents: 10.5 }, '/body/config/priceCents'],
      ['drop_in', { ...dropIn, interval: 'month' }, '/body/config/interval'],
      ['drop_in', { priceCents: 100 }, '/body/config/currency'],
      ['drop_in', { priceCents: 100, currency: 'usd' }, '/body/config/currency'],
      ['drop_in', { priceCents: 100, currency: 'QQQ' }, '/body/config/currency'],
      ['drop_in', 'cheap', '/body/config'],
      ['drop_in', null, '/body/config'],
    ];
    for (const [type, config, path] of cases) {
      const p = await expectProblem(
        await write('POST', '/v1/plans', key, { name: 'Bad', type, config }),
        422,
        'invalid_plan_config',
      );
      const paths = (p.errors as { path: string }[]).map((e) => e.path);
      if (!paths.includes(path))
        throw new Error(
          `${type} ${JSON.stringify(config)}: expected an error at ${path}, got ${JSON.stringify(p.errors)}`,
        );
    }
    const [{ n }] = (await s.sql`select count(*)::int as n from plans where name = 'Bad'`) as unknown as [
      { n: number },
    ];
    expect(n).toBe(0);
  });

  test('422 validation_failed: missing name, unknown type, missing config, unknown field', async () => {
    for (const body of [
      { type: 'drop_in', config: dropIn },
      { name: 'X', type: 'season_pass', config: dropIn },
      { name: 'X', type: 'drop_in' },
      { name: 'X', type: 'drop_in', config: dropIn, color: 'red' },
      { name: 'X', type: 'drop_in', config: dropIn, visibility: 'secret' },
    ]) {
      await expectProblem(await write('POST', '/v1/plans', key, body), 422, 'validation_failed');
    }
  });

  test('PATCH: 200; config re-checked against the stored type; type cannot change', async () => {
    const plan = await create(key, { name: 'Pack', type: 'class_pack', config: classPack });
    const res = await write('PATCH', `/v1/plans/${plan.id}`, key, {
      name: 'Pack of 20',
      config: { ...classPack, classCount: 20 },
      visibility: 'private',
      description: null,
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(Value.Check(Plan, body)).toBe(true);
    expect(body).toMatchObject({
      id: plan.id,
      name: 'Pack of 20',
      type: 'class_pack',
      visibility: 'private',
      config: { ...classPack, classCount: 20 },
    });
    // a valid drop_in config is not valid for this class_pack plan
    await expectProblem(
      await write('PATCH', `/v1/plans/${plan.id}`, key, { config: dropIn }),
      422,
      'invalid_plan_config',
    );
    await expectProblem(
      await write('PATCH', `/v1/plans/${plan.id}`, key, { type: 'drop_in' }),
      422,
      'validation_failed',
    );
    await expectProblem(
      await write('PATCH', `/v1/plans/${plan.id}`, key, { type: 'drop_in', config: dropIn }),
      422,
      'validation_failed',
    );
    const [row] = await s.sql`select type, config from plans where id = ${plan.id}`;
    expect(row).toEqual({ type: 'class_pack', config: { ...classPack, classCount: 20 } });
  });

  test('DELETE archives: 200 with the archived record; it stays listed as archived; repeat is harmless', async () => {
    const plan = await create(key, { name: 'Old', type: 'drop_in', config: dropIn });
    const res = await write('DELETE', `/v1/plans/${plan.id}`, key);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({ id: plan.id, status: 'archived' });
    expect(body.archivedAt).not.toBeNull();
    const again = await (await write('DELETE', `/v1/plans/${plan.id}`, key)).json();
    expect(again).toMatchObject({ status: 'archived', archivedAt: body.archivedAt });
    const list = await (await s.mg('/v1/plans', key)).json();
    expect(Value.Check(PlanPage, list)).toBe(true);
    expect(list.data.find((p: Plan) => p.id === plan.id)?.status).toBe('archived');
  });

  test("another studio's plan is 404 and unchanged; lists are per studio", async () => {
    const theirs = await create(otherKey, { name: 'Theirs', type: 'drop_in', config: dropIn });
    await expectProblem(await write('PATCH', `/v1/plans/${theirs.id}`, key, { name: 'Mine' }), 404, 'not_found');
    await expectProblem(await write('DELETE', `/v1/plans/${theirs.id}`, key), 404, 'not_found');
    await expectProblem(await write('PATCH', '/v1/plans/pln_nope', key, { name: 'Mine' }), 404, 'not_found');
    const [row] = await s.sql`select name, status from plans where id = ${theirs.id}`;
    expect(row).toEqual({ name: 'Theirs', status: 'active' });
    const list = await (await s.mg('/v1/plans', key)).json();
    expect(list.data.map((p: Plan) => p.id)).not.toContain(theirs.id);
  });
});
