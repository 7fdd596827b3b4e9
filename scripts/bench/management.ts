/**
 * The `management` case (`bun run bench management`): p50 of a Management list page at 1,000 and
 * 1,000,000 classes (bulk-inserted; 10,000 with --quick), first and deep, and of creating a class with
 * 52 weekly occurrences. Runs the management app in-process (`app.handle`, signed like the gateway) on
 * a scratch database it creates and drops. Its target: the create (its class's occurrences read back beside another
 * studio's 1,000,000 classes; scripts/bench/cases.ts).
 */

import { createManagementService } from '@studio/management-service';
import { signCursor } from '@studio/management-service/tooling';
import { type Caller, loadConfig, newId, SCOPES, signedHeaders } from '@studio/shared';
import { createSql } from '@studio/shared/io';
import postgres from 'postgres';
import { migrate } from '../lib/migrate';
import { createStudio } from '../lib/studios';
import { caseFlags, report } from './report';
import { median as p50 } from './stats';

const big = caseFlags.quick ? 10_000 : 1_000_000;
const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `studio_bench_mgmt_${process.pid}`;
const url = new URL(base);
url.pathname = `/${dbName}`;
const admin = postgres(base, { max: 1, onnotice: () => {} });

const config = loadConfig({ ...process.env, DATABASE_URL: url.href });
await migrate(url.href);
const sql = createSql(url.href, { max: 10 });
const app = createManagementService({ config, sql, redis: null });

async function call(caller: Caller, method: string, path: string, body?: unknown) {
  const text = body === undefined ? undefined : JSON.stringify(body);
  const idempotencyKey = text === undefined ? undefined : crypto.randomUUID();
  // signed as the gateway signs: the body's hash and the Idempotency-Key included
  const headers: Record<string, string> = signedHeaders(config.GATEWAY_SECRET, method, path, caller, Date.now(), {
    body: text,
    idempotencyKey,
  });
  if (text !== undefined) {
    headers['content-type'] = 'application/json';
    headers['idempotency-key'] = idempotencyKey!;
  }
  const res = await app.handle(new Request(`http://bench${path}`, { method, headers, body: text }));
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${await res.text()}`);
  return res.json();
}

async function studioWith(n: number) {
  const { studio } = await createStudio(sql, { name: `Bench ${n}` });
  const instructorId = newId('instructor');
  await sql`insert into instructors ${sql({ id: instructorId, studioId: studio.id, name: 'Bench' })}`;
  // one statement, ids sortable like newId's, created_at spread over the past
  await sql`
    insert into classes (id, studio_id, title, mode, instructor_id, starts_at, duration_minutes, created_at, updated_at)
    select 'cls_' || ${n} || 'x' || lpad(g::text, 12, '0'), ${studio.id}, 'Class ' || g, 'broadcast', ${instructorId},
           now() + make_interval(days => 1 + g % 300), 60, now() - make_interval(secs => ${n} - g), now()
    from generate_series(1, ${n}) g`;
  await sql`analyze classes`;
  const caller: Caller = {
    studioId: studio.id,
    keyId: 'key_bench',
    scopes: [...SCOPES],
    operationId: 'bench',
    requestId: 'req_bench',
  };
  return { caller, instructorId };
}

async function listP50(n: number) {
  const { caller } = await studioWith(n);
  const first: number[] = [];
  const deep: number[] = [];
  // a cursor 90% of the way in, to show the keyset costs the same deep in the table
  const [row] = await sql<{ id: string; k: string }[]>`
    select id, to_char(created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') as k from classes
    where studio_id = ${caller.studioId} order by created_at, id offset ${Math.floor(n * 0.9)} limit 1`;
  const cursor = signCursor(config.CURSOR_SECRET, {
    v: 1,
    l: 'classes',
    s: caller.studioId,
    k: row!.k,
    i: row!.id,
    f: {},
  });
  for (let i = 0; i < 5; i++) await call(caller, 'GET', '/v1/classes?limit=25'); // warm-up
  for (let i = 0; i < 50; i++) {
    let t = performance.now();
    await call(caller, 'GET', '/v1/classes?limit=25');
    first.push(performance.now() - t);
    t = performance.now();
    const page = await call(caller, 'GET', `/v1/classes?limit=25&cursor=${cursor}`);
    deep.push(performance.now() - t);
    if (page.data.length !== 25) throw new Error('deep page is short');
  }
  return { classes: n, firstPageP50Ms: +p50(first).toFixed(2), deepPageP50Ms: +p50(deep).toFixed(2) };
}

async function createP50() {
  const { caller, instructorId } = await studioWith(0);
  const times: number[] = [];
  for (let i = 0; i < 30; i++) {
    // each series on its own minute-of-day, so none overlaps another
    const start = new Date(Date.now() + 86_400_000);
    start.setUTCHours(0, i * 61, 0, 0);
    const t = performance.now();
    await call(caller, 'POST', '/v1/classes', {
      title: `Weekly ${i}`,
      mode: 'broadcast',
      instructorId,
      startsAt: start.toISOString(),
      durationMinutes: 60,
      recurrence: { intervalDays: 7, count: 52 },
    });
    times.push(performance.now() - t);
  }
  return { occurrences: 52, createP50Ms: +p50(times).toFixed(2) };
}

try {
  const [small, large] = [await listP50(1_000), await listP50(big)];
  const create = await createP50();
  console.log(JSON.stringify([small, large, create], null, 2));
  report({
    'first page p50 ms, 1,000 classes': small.firstPageP50Ms,
    'deep page p50 ms, 1,000 classes': small.deepPageP50Ms,
    [`first page p50 ms, ${big.toLocaleString('en')} classes`]: large.firstPageP50Ms,
    [`deep page p50 ms, ${big.toLocaleString('en')} classes`]: large.deepPageP50Ms,
    'create p50 ms, 52 occurrences': create.createP50Ms,
  });
} finally {
  await sql.end({ timeout: 2 });
  await admin.unsafe(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
