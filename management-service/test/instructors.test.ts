import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { Instructor, InstructorPage } from '@studio/shared/schemas';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { mgWrite, twoStudios } from './fixtures';

let s: Stack;
let key: string;
let otherKey: string;
beforeAll(async () => {
  s = await startStack();
  ({ key, otherKey } = await twoStudios(s, ['instructors:read', 'instructors:write']));
});
afterAll(() => s.close());

const write = (method: string, path: string, k: string, body: unknown) => mgWrite(s, method, path, k, body);

describe('instructors', () => {
  test('create: 201, the record, a Location; defaults applied', async () => {
    const res = await write('POST', '/v1/instructors', key, {
      name: 'Ana Ruiz',
      email: 'ana@studio.test',
      disciplines: ['yoga'],
    });
    expect(res.status).toBe(201);
    const body = await res.json();
    expect(Value.Check(Instructor, body)).toBe(true);
    expect(body).toMatchObject({
      name: 'Ana Ruiz',
      email: 'ana@studio.test',
      bio: null,
      photoUrl: null,
      disciplines: ['yoga'],
      active: true,
    });
    expect(body.id).toMatch(/^ins_/);
    expect(body.createdAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
    expect(res.headers.get('location')).toBe(`/v1/instructors/${body.id}`);
  });

  test("list: the studio's instructors only, oldest first, as a page", async () => {
    await write('POST', '/v1/instructors', key, { name: 'Second' });
    await write('POST', '/v1/instructors', otherKey, { name: 'Elsewhere' });
    const res = await s.mg('/v1/instructors', key);
    expect(res.status).toBe(200);
    const page = await res.json();
    expect(Value.Check(InstructorPage, page)).toBe(true);
    expect(page.next_cursor).toBeNull();
    const names = page.data.map((i: { name: string }) => i.name);
    expect(names).toContain('Second');
    expect(names).not.toContain('Elsewhere');
    expect(names.indexOf('Ana Ruiz')).toBeLessThan(names.indexOf('Second'));
  });

  test('update: 200 with the changed record; absent fields kept', async () => {
    const created = await (await write('POST', '/v1/instructors', key, { name: 'Ben', bio: 'Teaches.' })).json();
    const res = await write('PATCH', `/v1/instructors/${created.id}`, key, {
      active: false,
      photoUrl: 'https://img.test/ben.png',
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(body).toMatchObject({
      id: created.id,
      name: 'Ben',
      bio: 'Teaches.',
      active: false,
      photoUrl: 'https://img.test/ben.png',
    });
    expect(Date.parse(body.updatedAt)).toBeGreaterThanOrEqual(Date.parse(created.updatedAt));
  });

  test('an e-mail address follows the one rule of invites too: any script passes, a malformed one says what it should look like', async () => {
    expect((await write('POST', '/v1/instructors', key, { name: 'Tomás', email: 'tomás@lotus.test' })).status).toBe(
      201,
    );
    for (const path of ['/v1/instructors']) {
      const body = await expectProblem(
        await write('POST', path, key, { name: 'X', email: 'not-an-email' }),
        422,
        'validation_failed',
      );
      const [error] = body.errors as { path: string; message: string }[];
      expect(error!.path).toBe('/body/email');
      // the instructor's may be null too, and says so
      expect(error!.message).toStartWith(
        'is not in the expected format (an e-mail address, such as ana@lotus.example)',
      );
    }
  });

  test('photoUrl is an http(s) URL: javascript:, data: and other schemes are 422 (it is shown on public pages)', async () => {
    for (const bad of [
      'javascript:alert(1)',
      'JavaScript:alert(1)',
      'data:image/png;base64,AAAA',
      'ftp://img.test/a.png',
    ]) {
      const res = await write('POST', '/v1/instructors', key, { name: 'Eve', photoUrl: bad });
      const body = await expectProblem(res, 422, 'validation_failed');
      expect((body.errors as { path: string }[])[0]!.path).toBe('/body/photoUrl');
    }
    const ok = await write('POST', '/v1/instructors', key, { name: 'Eve', photoUrl: 'HTTPS://img.test/eve.png' });
    expect(ok.status).toBe(201);
  });

  test("another studio's instructor is 404 not_found, and unchanged", async () => {
    const theirs = await (await write('POST', '/v1/instructors', otherKey, { name: 'Theirs' })).json();
    await expectProblem(
      await write('PATCH', `/v1/instructors/${theirs.id}`, key, { name: 'Mine now' }),
      404,
      'not_found',
    );
    await expectProblem(await write('PATCH', '/v1/instructors/ins_doesnotexist', key, { name: 'X' }), 404, 'not_found');
    const [row] = await s.sql`select name from instructors where id = ${theirs.id}`;
    expect(row!.name).toBe('Theirs');
  });

  test('422 validation_failed: missing or overlong name, long bio, bad email, unknown field', async () => {
    for (const body of [
      {},
      { name: '' },
      { name: 'x'.repeat(121) },
      { name: 'A', bio: 'b'.repeat(2001) },
      { name: 'A', email: 'not-an-email' },
      { name: 'A', rating: 5 },
    ]) {
      const problem = await expectProblem(await write('POST', '/v1/instructors', key, body), 422, 'validation_failed');
      expect(Array.isArray(problem.errors)).toBe(true);
    }
    const created = await (await write('POST', '/v1/instructors', key, { name: 'C' })).json();
    await expectProblem(
      await write('PATCH', `/v1/instructors/${created.id}`, key, { id: 'ins_other' }),
      422,
      'validation_failed',
    );
    await expectProblem(
      await write('PATCH', `/v1/instructors/${created.id}`, key, { active: 'yes' }),
      422,
      'validation_failed',
    );
  });
});
