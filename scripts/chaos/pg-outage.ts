#!/usr/bin/env bun
import { createApiKey } from '@studio/control';
import { createSql } from '@studio/shared/io';
/**
 * `bun run chaos:pg`: issue 11's Postgres outage, measured from outside. A throwaway
 * Postgres (never the machine's), the three processes as production runs them, 20
 * clients mixing Management reads and idempotent creates through the gateway; Postgres
 * is stopped (`-m immediate`) for CHAOS_OUTAGE_S (8) seconds and started again. Prints
 * answers by status, the slowest answer, whether every request that started 5 s after
 * Postgres returned succeeded, whether every 201 exists exactly once, and whether every
 * process is still alive. Exits 1 when any of these fails.
 */
import postgres from 'postgres';
import { createBenchStack } from '../bench/stack';
import { createStudio } from '../lib/studios';
import { startThrowawayPostgres } from '../lib/throwaway-pg';

const OUTAGE_S = Number(process.env.CHAOS_OUTAGE_S ?? 8);
const BEFORE_S = 3;
const AFTER_S = Number(process.env.CHAOS_AFTER_S ?? 10);
const CLIENTS = 20;

export interface Sample {
  started: number;
  ended: number;
  status: number | 'error';
  kind: 'read' | 'create';
  id?: string;
  detail?: string;
}

export async function pgOutage(o: {
  outageS: number;
  beforeS: number;
  afterS: number;
  clients: number;
  log?: (s: string) => void;
  /** More of the processes' environment (the test suite's REDIS_URL, which may be `none`). */
  env?: Record<string, string>;
}) {
  const log = o.log ?? console.log;
  const pg = await startThrowawayPostgres();
  const stack = await createBenchStack(
    process.env.BENCH_SERVER_CPU ?? '0',
    { LOG_LEVEL: process.env.CHAOS_LOG_LEVEL ?? 'error', UPSTREAM_TIMEOUT_MS: '10000', ...o.env },
    pg.url,
  ).catch(async (err) => {
    await pg.destroy();
    throw err;
  });
  try {
    const sql = createSql(stack.config.DATABASE_URL, { max: 2 });
    const { studio } = await createStudio(sql, { name: 'Chaos' });
    const { key } = await createApiKey(sql, {
      studioId: studio.id,
      kind: 'secret',
      name: 'chaos',
      scopes: ['instructors:read', 'instructors:write'],
    });
    await sql.end();
    await stack.start(['management-service', 'storefront-service', 'gateway']);
    const base = stack.config.MANAGEMENT_PUBLIC_URL;
    const samples: Sample[] = [];
    const t0 = performance.now();
    const end = t0 + (o.beforeS + o.outageS + o.afterS) * 1000;
    let n = 0;
    const client = async () => {
      while (performance.now() < end) {
        const kind = n++ % 3 === 0 ? 'create' : 'read';
        const started = performance.now();
        const init: RequestInit =
          kind === 'create'
            ? {
                method: 'POST',
                body: JSON.stringify({ name: `Chaos ${n}` }),
                headers: {
                  authorization: `Bearer ${key}`,
                  'content-type': 'application/json',
                  'idempotency-key': crypto.randomUUID(),
                },
              }
            : { headers: { authorization: `Bearer ${key}` } };
        try {
          const res = await fetch(`${base}/v1/instructors`, { ...init, signal: AbortSignal.timeout(30_000) });
          const body = (await res.json().catch(() => ({}))) as { id?: string; detail?: string };
          samples.push({
            started,
            ended: performance.now(),
            status: res.status,
            kind,
            id: res.status === 201 ? body.id : undefined,
            detail: res.status >= 500 ? body.detail : undefined,
          });
        } catch {
          samples.push({ started, ended: performance.now(), status: 'error', kind });
        }
      }
    };
    const load = Promise.all(Array.from({ length: o.clients }, client));
    await Bun.sleep(o.beforeS * 1000);
    const down = performance.now();
    await pg.stop();
    log(`postgres stopped at ${((down - t0) / 1000).toFixed(1)} s`);
    await Bun.sleep(o.outageS * 1000);
    const restarting = performance.now();
    await pg.start();
    const back = performance.now();
    log(`postgres back at ${((back - t0) / 1000).toFixed(1)} s`);
    await load;

    const byStatus: Record<string, number> = {};
    for (const x of samples) byStatus[x.status] = (byStatus[x.status] ?? 0) + 1;
    const slowest = Math.max(...samples.map((x) => x.ended - x.started));
    const late = samples.filter((x) => x.started >= back + 5_000);
    const lateFailures = late.filter((x) => x.status !== 200 && x.status !== 201);
    // while Postgres is stopped, it refuses: 503 within a second. While it starts again (pg_ctl start until it
    // accepts queries), a connection waits for it as for any slow database, bounded by connect_timeout (2 s)
    const duringOutage = samples.filter((x) => x.started >= down + 1_000 && x.ended <= restarting);
    const slowestRestarting = Math.max(
      0,
      ...samples.filter((x) => x.ended > restarting && x.started < back).map((x) => x.ended - x.started),
    );
    const slowOnes = duringOutage.filter((x) => x.ended - x.started > 1_000);
    const slowDetail = slowOnes
      .slice(0, 5)
      .map(
        (x) =>
          `${x.kind} ${x.status} from +${((x.started - down) / 1000).toFixed(2)} s for ${Math.round(x.ended - x.started)} ms: ${x.detail}`,
      );
    const created = samples.filter((x) => x.id).map((x) => x.id!);
    const check = postgres(stack.config.DATABASE_URL, { max: 1, onnotice: () => {} });
    const rows = await check<
      { id: string; n: number }[]
    >`select id, count(*)::int as n from instructors where id = any(${created}) group by id`;
    await check.end();
    const exactlyOnce = rows.length === created.length && rows.every((r) => r.n === 1);
    const alive = stack.children().every((c) => c.exitCode === null);
    const lateDetail = lateFailures
      .slice(0, 5)
      .map((x) => `${x.kind} ${x.status} at +${((x.started - back) / 1000).toFixed(2)} s: ${x.detail}`);
    return {
      byStatus,
      slowest,
      late: late.length,
      lateFailures: lateFailures.length,
      lateDetail,
      duringOutage: duringOutage.length,
      slowDuringOutage: slowOnes.length,
      slowDetail,
      restartS: (back - restarting) / 1000,
      slowestRestarting,
      created: created.length,
      exactlyOnce,
      alive,
    };
  } finally {
    try {
      await stack.stop();
    } finally {
      await pg.destroy();
    }
  }
}

if (import.meta.main) {
  const r = await pgOutage({ outageS: OUTAGE_S, beforeS: BEFORE_S, afterS: AFTER_S, clients: CLIENTS });
  console.log(`answers by status: ${JSON.stringify(r.byStatus)}`);
  console.log(`slowest answer: ${(r.slowest / 1000).toFixed(2)} s`);
  console.log(`while stopped: ${r.duringOutage} requests, ${r.slowDuringOutage} took over 1 s`);
  console.log(
    `restart: ${r.restartS.toFixed(2)} s; slowest answer to a request in flight meanwhile: ${(r.slowestRestarting / 1000).toFixed(2)} s`,
  );
  console.log(
    `started 5 s after Postgres returned: ${r.late}, failed: ${r.lateFailures}${r.lateDetail.length ? ` (${r.lateDetail.join('; ')})` : ''}`,
  );
  console.log(`201s: ${r.created}, each exactly once in the database: ${r.exactlyOnce}`);
  console.log(`every process still alive: ${r.alive}`);
  const ok =
    !r.byStatus['500'] && !r.byStatus.error && r.slowest <= 11_000 && r.lateFailures === 0 && r.exactlyOnce && r.alive;
  console.log(ok ? 'RESULT: pass' : 'RESULT: fail');
  process.exit(ok ? 0 : 1);
}
