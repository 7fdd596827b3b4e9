/**
 * `GET /v1/key` on both surfaces: what the calling key is, for any valid key whatever its scopes (the SDK and the MCP
 * server check a key with it at start-up), each key its own answer (never another key's from a cache), never its text.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { ensureDefaultSandbox } from '@studio/management-service/sandboxes';
import { scopesOfMode } from '@studio/shared';
import { expectProblem, type Stack, startStack } from './harness';

let s: Stack;
beforeAll(async () => {
  s = await startStack();
});
afterAll(() => s.close());

test('a secret key holding no scope reads its own description; one with scopes sees them', async () => {
  const studio = await s.studio({ name: 'Key Info Studio' });
  const bare = await s.key(studio.id, 'secret', [], 'no scopes');
  const scoped = await s.key(studio.id, 'secret', ['classes:read', 'plans:write'], 'sync');
  const mine = await (await s.mg('/v1/key', bare.key)).json();
  expect(mine).toEqual({
    id: bare.id,
    name: 'no scopes',
    kind: 'secret',
    mode: 'live',
    studio: { id: studio.id, name: 'Key Info Studio' },
    sandbox: null,
    scopes: [],
    expiresAt: null,
    allowedOrigins: null,
  });
  const theirs = await (await s.mg('/v1/key', scoped.key)).json();
  expect(theirs).toMatchObject({ id: scoped.id, name: 'sync', scopes: ['classes:read', 'plans:write'] });
  expect(JSON.stringify([mine, theirs])).not.toContain(bare.key.slice(7));
});

test('publishable keys: each its own answer through the Storefront, twice (the studio cache never shares it), with origins', async () => {
  const studio = await s.studio();
  const a = await s.key(studio.id, 'publishable', [], 'website');
  const b = await s.key(studio.id, 'publishable', [], 'kiosk');
  for (let round = 0; round < 2; round++) {
    const ra = await s.sf('/v1/key', a.key);
    const rb = await s.sf('/v1/key', b.key);
    expect(ra.headers.get('vary')).toContain('Authorization');
    expect([(await ra.json()).id, (await rb.json()).id]).toEqual([a.id, b.id]);
  }
  const info = await (await s.sf('/v1/key', a.key)).json();
  expect(info).toMatchObject({ kind: 'publishable', mode: 'live', scopes: [], allowedOrigins: null });
  // the wrong surface for the kind: as every operation
  await expectProblem(await s.mg('/v1/key', a.key), 401, 'api_key_wrong_kind');
});

test('a test key says test mode, its sandbox and its live studio; sandbox:write among its scopes', async () => {
  const studio = await s.studio({ name: 'Lotus' });
  const { sandbox } = await ensureDefaultSandbox(s.sql, studio.id);
  const key = await s.key(sandbox.id, 'secret', scopesOfMode('test'));
  const info = await (await s.mg('/v1/key', key.key)).json();
  expect(info).toMatchObject({
    mode: 'test',
    studio: { id: sandbox.id, name: 'Lotus (test)' },
    sandbox: { name: 'default', liveStudioId: studio.id },
  });
  expect(info.scopes).toContain('sandbox:write');
});
