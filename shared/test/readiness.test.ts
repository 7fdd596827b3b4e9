import { afterAll, expect, test } from 'bun:test';
import { createSql } from '@studio/shared/io/db';
import { readiness } from '@studio/shared/io/readiness';

// a Postgres that is not there: port 1 refuses at once
const dead = createSql('postgres://postgres@127.0.0.1:1/none', { max: 1 });
afterAll(() => dead.end({ timeout: 0 }));

test('Postgres down: 503 unavailable, answered within about a second', async () => {
  const started = performance.now();
  const res = await readiness(dead, null);
  expect(res.status).toBe(503);
  expect(await res.json()).toEqual({ status: 'unavailable', checks: { postgres: 'down', redis: 'down' } });
  expect(performance.now() - started).toBeLessThan(1500);
});
