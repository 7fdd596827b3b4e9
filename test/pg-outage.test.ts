/**
 * A Postgres outage, from outside, on a throwaway Postgres this test starts,
 * stops (`-m immediate`) and starts again: the three processes as production runs them
 * (`scripts/chaos/pg-outage.ts`, shorter than `bun run chaos:pg`), 20 clients.
 */
import { expect } from 'bun:test';
import { pgOutage } from '../scripts/chaos/pg-outage';
import { needs } from './needs';

needs('pg-binaries').test(
  'Postgres stopped under load: no 500, 503 within a second while it is stopped (a restart is waited for, as any slow database), no process dies, every request 5 s after its return succeeds, every 201 exists once',
  async () => {
    const r = await pgOutage({
      beforeS: 1.5,
      outageS: 4,
      afterS: 7,
      clients: 20,
      log: () => {},
      env: { REDIS_URL: process.env.TEST_REDIS_URL! },
    });
    console.log(`pg outage: ${JSON.stringify({ ...r, slowest: Math.round(r.slowest) })}`);
    expect(r.byStatus['500']).toBeUndefined();
    expect(r.byStatus.error).toBeUndefined();
    expect(r.byStatus['503']).toBeGreaterThan(0); // the outage was seen, and answered as such
    expect(r.slowDuringOutage, r.slowDetail.join('; ')).toBe(0);
    expect(r.slowest).toBeLessThan(11_000);
    expect(r.late).toBeGreaterThan(0);
    expect(r.lateFailures).toBe(0);
    expect(r.exactlyOnce).toBe(true);
    expect(r.alive).toBe(true);
  },
  60_000,
);
