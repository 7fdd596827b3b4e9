/**
 * Origin-restricted publishable keys (docs/design/keys.md, gateway.md): a browser call from any other
 * site is 403 origin_not_allowed; calls without Origin (server-side) pass; the allowed
 * origin is echoed in CORS; a change holds at once on every replica.
 */
import { afterAll, beforeAll, describe, expect, test } from 'bun:test';
import { createApiKey, setKeyOrigins } from '@studio/control';
import { expectProblem, type Stack, startStack } from '../../test/harness';

let s: Stack;
let studioId: string;
beforeAll(async () => {
  s = await startStack();
  studioId = (await s.studio()).id;
});
afterAll(() => s.close());

const from = (origin?: string): RequestInit => (origin ? { headers: { origin } } : {});

describe('a publishable key restricted to its sites', () => {
  let key: string;
  beforeAll(async () => {
    key = (
      await createApiKey(s.sql, {
        studioId,
        kind: 'publishable',
        name: 'site',
        allowedOrigins: ['https://lotus.example', 'https://*.lotus.example'],
      })
    ).key;
  });

  test('exact origin and wildcard subdomains pass, with the origin echoed (on cached answers too)', async () => {
    for (const origin of [
      'https://lotus.example',
      'https://www.lotus.example',
      'https://a.b.lotus.example',
      'https://lotus.example',
    ]) {
      const res = await s.sf('/v1/instructors', key, from(origin));
      expect(res.status).toBe(200);
      expect(res.headers.get('access-control-allow-origin')).toBe(origin);
      expect(res.headers.get('vary')).toContain('Origin');
    }
  });

  test('a look-alike, another scheme or port, and another site are refused; a call without Origin passes', async () => {
    for (const origin of [
      'https://lotus.example.evil.example',
      'https://evil-lotus.example',
      'http://lotus.example',
      'https://www.lotus.example:8443',
      'https://evil.example',
    ]) {
      const body = await expectProblem(await s.sf('/v1/instructors', key, from(origin)), 403, 'origin_not_allowed');
      expect(String(body.detail)).toContain(origin);
    }
    const serverSide = await s.sf('/v1/instructors', key);
    expect(serverSide.status).toBe(200);
  });

  test('a refused call does not count as a use of the key', async () => {
    const fresh = await createApiKey(s.sql, {
      studioId,
      kind: 'publishable',
      name: 'unused',
      allowedOrigins: ['https://lotus.example'],
    });
    await expectProblem(
      await s.sf('/v1/instructors', fresh.key, from('https://evil.example')),
      403,
      'origin_not_allowed',
    );
    await s.gateway.activity.flush();
    const [row] = await s.sql<
      { lastUsedAt: Date | null }[]
    >`select last_used_at from api_keys where id = ${fresh.record.id}`;
    expect(row!.lastUsedAt).toBeNull();
  });
});

test('an unrestricted key answers any origin with *; restricting it holds at once, whatever is cached, and lifting it too', async () => {
  const { key, record } = await createApiKey(s.sql, { studioId, kind: 'publishable', name: 'open' });
  const open = await s.sf('/v1/instructors', key, from('https://evil.example'));
  expect(open.status).toBe(200);
  expect(open.headers.get('access-control-allow-origin')).toBe('*');
  const restricted = await setKeyOrigins(s.sql, s.bus, record.id, ['https://lotus.example']);
  expect(restricted.propagated).toBe(true);
  expect(restricted.allowedOrigins).toEqual(['https://lotus.example']);
  await expectProblem(await s.sf('/v1/instructors', key, from('https://evil.example')), 403, 'origin_not_allowed');
  await setKeyOrigins(s.sql, s.bus, record.id, []);
  expect((await s.sf('/v1/instructors', key, from('https://evil.example'))).status).toBe(200);
});

test('origins are for publishable keys only, and each must be an origin or https://*.domain', async () => {
  await expect(
    createApiKey(s.sql, {
      studioId,
      kind: 'secret',
      name: 'x',
      scopes: ['classes:read'],
      allowedOrigins: ['https://lotus.example'],
    }),
  ).rejects.toThrow(/publishable/);
  await expect(
    createApiKey(s.sql, { studioId, kind: 'publishable', name: 'x', allowedOrigins: ['lotus.example/path'] }),
  ).rejects.toThrow(/not an origin/);
  await expect(
    createApiKey(s.sql, { studioId, kind: 'publishable', name: 'x', allowedOrigins: ['http://lotus.example'] }),
  ).rejects.toThrow(/https/);
});
