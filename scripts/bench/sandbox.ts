/**
 * The `sandbox` case (`bun run bench sandbox`): how long test mode's two heavy calls take (docs/design/test-mode.md):
 * making a sandbox (a studio, seeded with the demo studio's records) and resetting one (its records, events and
 * idempotency records deleted, seeded again), each the median of 10, on a scratch database it creates and drops,
 * through the module the CLI and the dashboard call (the API's reset runs the same transaction).
 */
import {
  createSandbox,
  deleteSandboxes,
  ensureDefaultSandbox,
  resetSandbox,
} from '@studio/management-service/sandboxes';
import { createSql, postgresBroadcasts } from '@studio/shared/io';
import postgres from 'postgres';
import { migrate } from '../lib/migrate';
import { createStudio } from '../lib/studios';
import { caseFlags, report } from './report';
import { median } from './stats';

const runs = caseFlags.quick ? 3 : 10;
const base = process.env.DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/postgres';
const dbName = `studio_bench_sandbox_${process.pid}`;
const url = new URL(base);
url.pathname = `/${dbName}`;
const admin = postgres(base, { max: 1, onnotice: () => {} });
await admin.unsafe(`create database ${dbName}`);

await migrate(url.href);
const sql = createSql(url.href, { max: 4 });
const bus = postgresBroadcasts(sql);

const timed = async (fn: () => Promise<unknown>) => {
  const t = performance.now();
  await fn();
  return performance.now() - t;
};

try {
  const creates: number[] = [];
  const resets: number[] = [];
  for (let i = 0; i < runs; i++) {
    const { studio } = await createStudio(sql, { name: `Bench ${i}` });
    creates.push(await timed(() => createSandbox(sql, studio.id, 'ci')));
    const { sandbox } = await ensureDefaultSandbox(sql, studio.id);
    // a sandbox that was used: a week of writes' worth of events and idempotency records to delete
    await sql`
      insert into events (studio_id, id, type, resource, data)
      select ${sandbox.id}, 'evt_bench' || g, 'class.updated', 'class', '{}'::jsonb from generate_series(1, 2000) g`;
    resets.push(await timed(() => resetSandbox(sql, bus, sandbox.id)));
    await deleteSandboxes(sql, bus, [sandbox.id]);
  }
  report({ 'create p50 ms': +median(creates).toFixed(1), 'reset p50 ms': +median(resets).toFixed(1) });
} finally {
  await sql.end({ timeout: 2 });
  await admin.unsafe(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
