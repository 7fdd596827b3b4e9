/** docs/design/hostile-callers.md on the dashboard: NUL in a form's text is the form's own 422, never a 500 from Postgres. */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type Stack, startStack } from '../../test/harness';
import { postForm, signIn } from './dashboard-helpers';

let s: Stack;
let studioId: string;
let session: { cookie: string; csrf: string };
beforeAll(async () => {
  s = await startStack();
  studioId = (await s.studio({ name: 'Lotus Yoga' })).id;
  session = await signIn(s, studioId);
});
afterAll(() => s.close());

const post = (path: string, fields: Record<string, string | string[]>) =>
  postForm(s, path, { csrf: session.csrf, ...fields }, session.cookie);

test('a key name or a website with NUL: each form answers 422 with its message, and nothing is stored', async () => {
  const site = await s.key(studioId, 'publishable', [], 'site');
  const sends: [string, Record<string, string | string[]>, string][] = [
    ['/keys', { kind: 'publishable', name: 'web\u0000site', origins: '' }, 'cannot contain a NUL character'],
    ['/keys', { kind: 'secret', name: 'ci\u0000', scope: ['classes:read'] }, 'cannot contain a NUL character'],
    [`/keys/${site.id}/rename`, { name: 'si\u0000te' }, 'cannot contain a NUL character'],
    [`/keys/${site.id}/origins`, { origins: 'https://lotus\u0000.example' }, 'is not a valid host name'],
  ];
  for (const [path, fields, message] of sends) {
    const res = await post(path, fields);
    expect(`${path} -> ${res.status}`).toBe(`${path} -> 422`);
    expect(await res.text()).toContain(message);
  }
  const names = await s.sql<{ name: string }[]>`select name from api_keys where studio_id = ${studioId}`;
  expect(names.map((k) => k.name)).toEqual(['site']);
});
