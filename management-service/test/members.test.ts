import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { newId } from '@studio/shared';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { studioWithKey } from './fixtures';

let s: Stack;
beforeAll(async () => (s = await startStack()));
afterAll(() => s.close());

describe('members', () => {
  test('invite: 201, e-mail stored lower-case, default role member, status invited', async () => {
    const { write, get } = await studioWithKey(s);
    const res = await write('POST', '/v1/members/invites', { email: 'Jo.Doe@Example.TEST', name: 'Jo' });
    expect(res.status).toBe(201);
    const m = await res.json();
    expect(m).toMatchObject({
      email: 'jo.doe@example.test',
      name: 'Jo',
      role: 'member',
      status: 'invited',
      cancelledAt: null,
    });
    expect(m.id).toMatch(/^mem_/);
    expect(m.invitedAt).toMatch(/Z$/);
    expect(res.headers.get('location')).toBe(`/v1/members/${m.id}`);
    const list = await (await get('/v1/members')).json();
    expect(list.data.map((x: { email: string }) => x.email)).toContain('jo.doe@example.test');
  });

  test('409 member_exists whatever the case; a cancelled member may be re-invited', async () => {
    const { write } = await studioWithKey(s);
    const m = await (await write('POST', '/v1/members/invites', { email: 'dup@x.test' })).json();
    const dup = await expectProblem(
      await write('POST', '/v1/members/invites', { email: 'DUP@X.test' }),
      409,
      'member_exists',
    );
    expect(dup.detail).toContain('already has this e-mail address (compared case-insensitively)');
    // a malformed address says what one looks like (not the field's documentation)
    const bad = await expectProblem(
      await write('POST', '/v1/members/invites', { email: 'not-an-email' }),
      422,
      'validation_failed',
    );
    expect(bad.errors).toEqual([
      { path: '/body/email', message: 'is not in the expected format (an e-mail address, such as ana@lotus.example)' },
    ]);
    expect((await write('POST', `/v1/members/${m.id}/cancel`)).status).toBe(200);
    expect((await write('POST', '/v1/members/invites', { email: 'Dup@x.test' })).status).toBe(201);
  });

  test('one address in two Unicode forms is one member; one that lower-casing lengthens past 254 is refused', async () => {
    const { write, get } = await studioWithKey(s);
    expect((await write('POST', '/v1/members/invites', { email: 'jos\u00e9@x.test' })).status).toBe(201);
    await expectProblem(
      await write('POST', '/v1/members/invites', { email: 'jose\u0301@x.test' }),
      409,
      'member_exists',
    );
    // lower-casing can undo NFC: J and a combining caron (NFC as sent) lower-cased is j and the caron, which is ǰ
    expect((await write('POST', '/v1/members/invites', { email: 'J\u030cane@x.test' })).status).toBe(201);
    await expectProblem(
      await write('POST', '/v1/members/invites', { email: '\u01f0ane@x.test' }),
      409,
      'member_exists',
    );
    // 129 characters as sent, 256 once lower-cased (each İ becomes i and a combining dot)
    const long = await expectProblem(
      await write('POST', '/v1/members/invites', { email: `a@${'\u0130'.repeat(127)}` }),
      422,
      'validation_failed',
    );
    expect(long.errors).toEqual([{ path: '/body/email', message: 'must be at most 254 characters' }]);
    expect((await get('/v1/members')).status).toBe(200); // every page of members still answers
  });

  test('a stored record its answer cannot carry is our fault, said as one: 500, not 422 blaming the caller', async () => {
    const { studio, get } = await studioWithKey(s);
    // a row no API call can make (an address longer than the answer's schema allows), as a bug or a hand edit would
    await s.sql`insert into members (id, studio_id, email, role, status, invited_at)
      values ('mem_' || substr(md5(random()::text), 1, 22), ${studio.id}, ${`${'a'.repeat(300)}@x.test`}, 'member', 'invited', now())`;
    const res = await get('/v1/members');
    const body = await expectProblem(res, 500, 'internal_error');
    expect(JSON.stringify(body)).not.toContain('aaaa'); // nothing of the record, nor of the schema, told to the caller
  });

  test('422 invalid_role on invite and update; 422 validation_failed for a bad e-mail or unknown field', async () => {
    const { write } = await studioWithKey(s);
    await expectProblem(
      await write('POST', '/v1/members/invites', { email: 'r@x.test', role: 'owner' }),
      422,
      'invalid_role',
    );
    const m = await (await write('POST', '/v1/members/invites', { email: 'r@x.test', role: 'front_desk' })).json();
    expect(m.role).toBe('front_desk');
    await expectProblem(await write('PATCH', `/v1/members/${m.id}`, { role: 'superuser' }), 422, 'invalid_role');
    // which member first (404), then whether it may change (409), then the values (422)
    await expectProblem(await write('PATCH', `/v1/members/${newId('member')}`, { role: 'owner' }), 404, 'not_found');
    expect((await write('POST', `/v1/members/${m.id}/cancel`)).status).toBe(200);
    await expectProblem(await write('PATCH', `/v1/members/${m.id}`, { role: 'owner' }), 409, 'membership_cancelled');
    await expectProblem(
      await write('POST', '/v1/members/invites', { email: 'not-an-email' }),
      422,
      'validation_failed',
    );
    await expectProblem(await write('POST', '/v1/members/invites', {}), 422, 'validation_failed');
    await expectProblem(
      await write('POST', '/v1/members/invites', { email: 'z@x.test', status: 'active' }),
      422,
      'validation_failed',
    );
  });

  test("PATCH name and role; 404 for another studio's member", async () => {
    const a = await studioWithKey(s);
    const b = await studioWithKey(s);
    const m = await (await a.write('POST', '/v1/members/invites', { email: 'p@x.test' })).json();
    const res = await a.write('PATCH', `/v1/members/${m.id}`, { name: 'Pat', role: 'manager' });
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ id: m.id, name: 'Pat', role: 'manager' });
    await expectProblem(await b.write('PATCH', `/v1/members/${m.id}`, { name: 'x' }), 404, 'not_found');
    await expectProblem(await b.write('POST', `/v1/members/${m.id}/cancel`), 404, 'not_found');
    await expectProblem(await a.write('PATCH', '/v1/members/mem_missing', { name: 'x' }), 404, 'not_found');
  });

  test('409 last_admin on demoting or cancelling the last active admin; fine once another admin is active', async () => {
    const { studio, write } = await studioWithKey(s);
    await expectProblem(await write('PATCH', `/v1/members/${studio.adminId}`, { role: 'manager' }), 409, 'last_admin');
    await expectProblem(await write('POST', `/v1/members/${studio.adminId}/cancel`), 409, 'last_admin');
    expect((await write('PATCH', `/v1/members/${studio.adminId}`, { name: 'Owner', role: 'admin' })).status).toBe(200);
    // an invited admin does not count
    const invited = await (
      await write('POST', '/v1/members/invites', { email: 'second@x.test', role: 'admin' })
    ).json();
    await expectProblem(await write('PATCH', `/v1/members/${studio.adminId}`, { role: 'member' }), 409, 'last_admin');
    await s.sql`update members set status = 'active' where id = ${invited.id}`;
    const demoted = await write('PATCH', `/v1/members/${studio.adminId}`, { role: 'member' });
    expect(demoted.status).toBe(200);
    await expectProblem(await write('POST', `/v1/members/${invited.id}/cancel`), 409, 'last_admin');
  });

  test('two concurrent demotions of the only two admins: one wins, one is 409 last_admin', async () => {
    const { studio, write } = await studioWithKey(s);
    const second = await (await write('POST', '/v1/members/invites', { email: 'two@x.test', role: 'admin' })).json();
    await s.sql`update members set status = 'active' where id = ${second.id}`;
    const [r1, r2] = await Promise.all([
      write('PATCH', `/v1/members/${studio.adminId}`, { role: 'manager' }),
      write('POST', `/v1/members/${second.id}/cancel`),
    ]);
    expect([r1.status, r2.status].sort()).toEqual([200, 409]);
    const [n] =
      await s.sql`select count(*)::int as n from members where studio_id = ${studio.id} and role = 'admin' and status = 'active'`;
    expect(n!.n).toBe(1);
  });

  test('cancel: status cancelled with cancelledAt, repeatable', async () => {
    const { write } = await studioWithKey(s);
    const m = await (await write('POST', '/v1/members/invites', { email: 'c@x.test' })).json();
    const res = await write('POST', `/v1/members/${m.id}/cancel`);
    expect(res.status).toBe(200);
    const done = await res.json();
    expect(done).toMatchObject({ status: 'cancelled' });
    expect(done.cancelledAt).toBeString();
    expect((await write('POST', `/v1/members/${m.id}/cancel`)).status).toBe(200);
    // cancelling is final: no new name or role for the cancelled membership
    await expectProblem(await write('PATCH', `/v1/members/${m.id}`, { role: 'admin' }), 409, 'membership_cancelled');
  });
});
