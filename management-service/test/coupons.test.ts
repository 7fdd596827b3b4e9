import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { Coupon, CouponPage } from '@studio/shared/schemas';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { mgWrite, twoStudios } from './fixtures';

let s: Stack;
let key: string;
let otherKey: string;
beforeAll(async () => {
  s = await startStack();
  ({ key, otherKey } = await twoStudios(s, ['coupons:read', 'coupons:write']));
});
afterAll(() => s.close());

const write = (method: string, path: string, k: string, body?: unknown) => mgWrite(s, method, path, k, body);
const percent = { kind: 'percent', percentOff: 20 };
const future = () => new Date(Date.now() + 86_400_000).toISOString();
let n = 0;
const code = () => `CODE_${++n}_${Math.random().toString(36).slice(2, 8).toUpperCase()}`;
const create = async (k: string, body: Record<string, unknown>) => {
  const res = await write('POST', '/v1/coupons', k, body);
  expect(res.status).toBe(201);
  return (await res.json()) as Coupon;
};

describe('coupons', () => {
  test('create: 201 + Location, code stored upper-case, both config kinds', async () => {
    const expiresAt = new Date(Date.now() + 3_600_000);
    const res = await write('POST', '/v1/coupons', key, {
      code: 'summer-24_a',
      config: percent,
      maxRedemptions: 100,
      expiresAt: expiresAt.toISOString().replace('Z', '+00:00'),
    });
    expect(res.status).toBe(201);
    const coupon = await res.json();
    expect(Value.Check(Coupon, coupon)).toBe(true);
    expect(coupon).toMatchObject({
      code: 'SUMMER-24_A',
      config: percent,
      maxRedemptions: 100,
      expiresAt: expiresAt.toISOString(),
      status: 'active',
      archivedAt: null,
    });
    expect(coupon.id).toMatch(/^cpn_/);
    expect(res.headers.get('location')).toBe(`/v1/coupons/${coupon.id}`);
    const amount = await create(key, {
      code: code(),
      config: { kind: 'amount', amountOffCents: 500, currency: 'EUR' },
    });
    expect(amount).toMatchObject({
      config: { kind: 'amount', amountOffCents: 500, currency: 'EUR' },
      maxRedemptions: null,
      expiresAt: null,
    });
  });

  test('409 coupon_code_taken among active coupons, case-insensitively; an archived code is reusable', async () => {
    const first = await create(key, { code: 'WELCOME', config: percent });
    const taken = await expectProblem(
      await write('POST', '/v1/coupons', key, { code: 'welcome', config: percent }),
      409,
      'coupon_code_taken',
    );
    expect(taken.detail).toContain('already has this code');
    await expectProblem(
      await write('POST', '/v1/coupons', key, {
        code: 'WELCOME',
        config: { kind: 'amount', amountOffCents: 1, currency: 'USD' },
      }),
      409,
      'coupon_code_taken',
    );
    // another studio may use the same code
    await create(otherKey, { code: 'WELCOME', config: percent });
    expect((await write('DELETE', `/v1/coupons/${first.id}`, key)).status).toBe(200);
    const again = await create(key, { code: 'Welcome', config: percent });
    expect(again.code).toBe('WELCOME');
    expect(again.id).not.toBe(first.id);
  });

  test('two concurrent creates of one code: one 201, one 409', async () => {
    const c = code();
    const [a, b] = await Promise.all([
      write('POST', '/v1/coupons', key, { code: c, config: percent }),
      write('POST', '/v1/coupons', key, { code: c.toLowerCase(), config: percent }),
    ]);
    expect([a.status, b.status].sort()).toEqual([201, 409]);
    await expectProblem(a.status === 409 ? a : b, 409, 'coupon_code_taken');
  });

  test('a retry with the same Idempotency-Key replays the 201 instead of meeting its own code (409)', async () => {
    const c = code();
    const init = {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'idempotency-key': crypto.randomUUID() },
      body: JSON.stringify({ code: c, config: percent }),
    };
    const first = await s.mg('/v1/coupons', key, init);
    const retry = await s.mg('/v1/coupons', key, init);
    expect(first.status).toBe(201);
    expect(retry.status).toBe(201);
    expect(retry.headers.get('idempotent-replayed')).toBe('true');
    expect(retry.headers.get('location')).toBe(first.headers.get('location'));
    expect(await retry.json()).toEqual(await first.json());
    expect((await s.sql`select 1 from coupons where code = ${c}`).length).toBe(1);
  });

  test('422 invalid_coupon_config with errors', async () => {
    const cases: [unknown, string][] = [
      [{ kind: 'percent', percentOff: 0 }, '/body/config/percentOff'],
      [{ kind: 'percent', percentOff: 101 }, '/body/config/percentOff'],
      [{ kind: 'percent' }, '/body/config/percentOff'],
      [{ kind: 'percent', percentOff: 10, currency: 'USD' }, '/body/config/currency'],
      [{ kind: 'amount', amountOffCents: 0, currency: 'USD' }, '/body/config/amountOffCents'],
      [{ kind: 'amount', amountOffCents: 100 }, '/body/config/currency'],
      [{ kind: 'amount', amountOffCents: 100, currency: 'ABC' }, '/body/config/currency'],
      [{ kind: 'bogo' }, '/body/config/kind'],
      [{ percentOff: 10 }, '/body/config/kind'],
      ['10%', '/body/config'],
      [null, '/body/config'],
    ];
    for (const [config, path] of cases) {
      const p = await expectProblem(
        await write('POST', '/v1/coupons', key, { code: 'BADCFG', config }),
        422,
        'invalid_coupon_config',
      );
      const paths = (p.errors as { path: string }[]).map((e) => e.path);
      if (!paths.includes(path))
        throw new Error(`${JSON.stringify(config)}: expected an error at ${path}, got ${JSON.stringify(p.errors)}`);
    }
    expect((await s.sql`select 1 from coupons where code = 'BADCFG'`).length).toBe(0);
  });

  test('422 validation_failed: bad code, past or malformed expiresAt, maxRedemptions < 1, unknown field', async () => {
    for (const body of [
      { code: 'AB', config: percent },
      { code: 'A'.repeat(33), config: percent },
      { code: 'NO SPACES', config: percent },
      { code: 'ÜBER', config: percent },
      { config: percent },
      { code: code(), config: percent, maxRedemptions: 0 },
      { code: code(), config: percent, status: 'archived' },
      { code: code(), config: percent, expiresAt: '2001-01-01T00:00:00Z' },
      { code: code(), config: percent, expiresAt: 'tomorrow' },
      { code: code(), config: percent, expiresAt: '2030-01-01T00:00:00' },
    ]) {
      await expectProblem(await write('POST', '/v1/coupons', key, body), 422, 'validation_failed');
    }
    expect((await create(key, { code: code(), config: percent, expiresAt: future() })).expiresAt).not.toBeNull();
  });

  test('DELETE archives: 200 with the final record, listed as archived; other studio 404', async () => {
    const coupon = await create(key, { code: code(), config: percent });
    const res = await write('DELETE', `/v1/coupons/${coupon.id}`, key);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(Value.Check(Coupon, body)).toBe(true);
    expect(body).toMatchObject({ id: coupon.id, status: 'archived' });
    expect(body.archivedAt).not.toBeNull();
    const list = await (await s.mg('/v1/coupons', key)).json();
    expect(Value.Check(CouponPage, list)).toBe(true);
    expect(list.data.find((c: Coupon) => c.id === coupon.id)?.status).toBe('archived');

    const theirs = await create(otherKey, { code: code(), config: percent });
    await expectProblem(await write('DELETE', `/v1/coupons/${theirs.id}`, key), 404, 'not_found');
    await expectProblem(await write('DELETE', '/v1/coupons/cpn_missing', key), 404, 'not_found');
    const [row] = await s.sql`select status from coupons where id = ${theirs.id}`;
    expect(row!.status).toBe('active');
    expect(list.data.map((c: Coupon) => c.id)).not.toContain(theirs.id);
  });
});
