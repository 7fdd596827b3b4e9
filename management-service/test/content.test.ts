import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { Value } from '@sinclair/typebox/value';
import { newId } from '@studio/shared';
import { Video, VideoPage } from '@studio/shared/schemas';
import { expectProblem, type Stack, startStack } from '../../test/harness';
import { mgWrite } from './fixtures';

let s: Stack;
let key: string;
let studioId: string;
let otherStudioId: string;
beforeAll(async () => {
  s = await startStack();
  studioId = (await s.studio()).id;
  otherStudioId = (await s.studio()).id;
  key = (await s.key(studioId, 'secret', ['content:read', 'content:write'])).key;
});
afterAll(() => s.close());

const write = (method: string, path: string, body?: unknown) => mgWrite(s, method, path, key, body);
/** Videos have no create operation: rows are inserted as the uploader would. */
async function video(studio: string, fields: Record<string, unknown> = {}): Promise<string> {
  const id = newId('content');
  await s.sql`insert into content ${s.sql({ id, studioId: studio, title: 'Morning flow', durationSeconds: 1800, ...fields })}`;
  return id;
}
async function instructor(studio: string, active = true): Promise<string> {
  const id = newId('instructor');
  await s.sql`insert into instructors ${s.sql({ id, studioId: studio, name: 'Teacher', active })}`;
  return id;
}

describe('content', () => {
  test("list: the studio's videos with their shape", async () => {
    const id = await video(studioId, { description: 'Gentle', status: 'processing' });
    const theirs = await video(otherStudioId);
    const res = await s.mg('/v1/content', key);
    expect(res.status).toBe(200);
    const page = await res.json();
    expect(Value.Check(VideoPage, page)).toBe(true);
    expect(page.next_cursor).toBeNull();
    const mine = page.data.find((v: Video) => v.id === id);
    expect(mine).toMatchObject({
      title: 'Morning flow',
      description: 'Gentle',
      durationSeconds: 1800,
      instructorId: null,
      visibility: 'public',
      status: 'processing',
      deletedAt: null,
    });
    expect(page.data.map((v: Video) => v.id)).not.toContain(theirs);
  });

  test('PATCH: 200 with the record; instructorId must be an active instructor of the studio', async () => {
    const id = await video(studioId);
    const ins = await instructor(studioId);
    const res = await write('PATCH', `/v1/content/${id}`, {
      title: 'Evening flow',
      visibility: 'members_only',
      instructorId: ins,
      description: null,
    });
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(Value.Check(Video, body)).toBe(true);
    expect(body).toMatchObject({
      id,
      title: 'Evening flow',
      visibility: 'members_only',
      instructorId: ins,
      description: null,
      durationSeconds: 1800,
    });

    const inactive = await instructor(studioId, false);
    const foreign = await instructor(otherStudioId);
    for (const instructorId of [inactive, foreign, 'ins_missing']) {
      await expectProblem(await write('PATCH', `/v1/content/${id}`, { instructorId }), 422, 'unknown_instructor');
    }
    const [row] = await s.sql`select instructor_id from content where id = ${id}`;
    expect(row!.instructorId).toBe(ins);
    expect((await (await write('PATCH', `/v1/content/${id}`, { instructorId: null })).json()).instructorId).toBeNull();
  });

  test('PATCH 422 validation_failed: unknown or read-only fields, bad values', async () => {
    const id = await video(studioId);
    for (const body of [
      { status: 'ready' },
      { durationSeconds: 10 },
      { title: '' },
      { visibility: 'secret' },
      { tags: ['x'] },
    ]) {
      await expectProblem(await write('PATCH', `/v1/content/${id}`, body), 422, 'validation_failed');
    }
  });

  test('DELETE: 200 with the final record; then 404 and gone from the list', async () => {
    const id = await video(studioId);
    const res = await write('DELETE', `/v1/content/${id}`);
    expect(res.status).toBe(200);
    const body = await res.json();
    expect(Value.Check(Video, body)).toBe(true);
    expect(body.id).toBe(id);
    expect(body.deletedAt).not.toBeNull();
    await expectProblem(await write('DELETE', `/v1/content/${id}`), 404, 'not_found');
    await expectProblem(await write('PATCH', `/v1/content/${id}`, { title: 'Back' }), 404, 'not_found');
    const list = await (await s.mg('/v1/content', key)).json();
    expect(list.data.map((v: Video) => v.id)).not.toContain(id);
  });

  test("another studio's video is 404 for PATCH and DELETE, and unchanged", async () => {
    const theirs = await video(otherStudioId);
    await expectProblem(await write('PATCH', `/v1/content/${theirs}`, { title: 'Mine' }), 404, 'not_found');
    await expectProblem(await write('DELETE', `/v1/content/${theirs}`), 404, 'not_found');
    await expectProblem(await write('DELETE', '/v1/content/vid_missing'), 404, 'not_found');
    // 404 wins over the instructor check: the video is not there to judge
    await expectProblem(
      await write('PATCH', `/v1/content/${theirs}`, { instructorId: 'ins_missing' }),
      404,
      'not_found',
    );
    const [row] = await s.sql`select title, deleted_at from content where id = ${theirs}`;
    expect(row).toEqual({ title: 'Morning flow', deletedAt: null });
  });
});
