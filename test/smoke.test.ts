import { afterAll, beforeAll, expect, test } from 'bun:test';
import { type Stack, startStack } from './harness';

let s: Stack;
beforeAll(async () => (s = await startStack()));
afterAll(() => s.close());

test('a publishable key reads the storefront through the gateway', async () => {
  const studio = await s.studio();
  const { key } = await s.key(studio.id, 'publishable');
  const res = await s.sf('/v1/instructors', key);
  expect(res.status).toBe(200);
  expect(await res.json()).toEqual({ instructors: [] });
});
