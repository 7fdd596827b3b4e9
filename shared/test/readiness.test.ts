import { afterAll, expect, test } from 'bun:test';
import { createSql, readinessCheck, type Sql } from '@studio/shared/io';

// a Postgres that is not there: port 1 refuses at once
const dead = createSql('postgres://postgres@127.0.0.1:1/none', { max: 1 });
afterAll(() => dead.end({ timeout: 0 }));

test('Postgres down: 503 unavailable, answered within about a second', async () => {
  const started = performance.now();
  const res = await readinessCheck(dead, null)();
  expect(res.status).toBe(503);
  expect(await res.json()).toEqual({ status: 'unavailable', checks: { postgres: 'down', redis: 'down' } });
  expect(performance.now() - started).toBeLessThan(1500);
});

test('a flood of /readyz probes Postgres once a second, not once a call; the serving state is read on every answer', async () => {
  const live = createSql(process.env.TEST_DATABASE_URL!, { max: 2 });
  let probes = 0;
  // the real client, its queries counted
  const counted = ((...args: Parameters<Sql>) => {
    probes++;
    return live(...args);
  }) as unknown as Sql;
  const state = { draining: false };
  const check = readinessCheck(counted, 'none', state);
  try {
    const answers = await Promise.all(Array.from({ length: 200 }, () => check()));
    expect(answers.every((r) => r.status === 200)).toBe(true);
    expect(probes).toBe(1);
    state.draining = true;
    expect((await check()).status).toBe(503); // within the second: the probe's finding, the state now
    expect(probes).toBe(1);
    await Bun.sleep(1_050);
    state.draining = false;
    expect((await check()).status).toBe(200);
    expect(probes).toBe(2);
  } finally {
    await live.end();
  }
});
