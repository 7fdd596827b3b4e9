/**
 * Migration 00009 on a database that already has an activity log: every entry stays, on
 * the new key; older request ids stay findable through the partial index; a row without a
 * key (the gateway never wrote one) does not stop the migration.
 */
import { afterAll, expect, test } from 'bun:test';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import postgres from 'postgres';
import { randomBase62 } from '@studio/shared/base62';
import { MIGRATIONS_DIR, migrate } from '../scripts/lib/migrate';

const name = `studio_m_${randomBase62(10).toLowerCase()}`;
const url = Object.assign(new URL(process.env.TEST_DATABASE_URL!), { pathname: `/${name}` }).href;
const before = await mkdtemp(join(tmpdir(), 'migrations-'));
afterAll(async () => {
  await rm(before, { recursive: true, force: true });
  const admin = postgres(process.env.TEST_DATABASE_URL!, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${name} with (force)`);
  await admin.end();
});

test('00009 keeps every entry of a live log on the new key, and the older request ids findable', async () => {
  for (const f of (await readdir(MIGRATIONS_DIR)).filter((f) => f < '00009')) await cp(join(MIGRATIONS_DIR, f), join(before, f));
  await migrate(url, before);
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await sql`
      insert into activity (studio_id, key_id, method, path, status, outcome, duration_ms, request_id, at)
      select 'std_a', 'key_' || (g % 3), 'GET', '/v1/classes', 200, 'success', 1, 'req_' || lpad(g::text, 18, '0'), timestamptz '2026-11-01' + g * interval '1 second'
      from generate_series(1, 300) g`;
    await sql`insert into activity (studio_id, key_id, method, path, status, outcome, duration_ms, request_id, at)
      values ('std_a', null, 'GET', '/v1/x', 200, 'success', 1, 'req_by_hand', now())`;

    expect(await migrate(url)).toEqual(['00009_activity_one_btree.sql']);

    const [count] = await sql<{ n: number }[]>`select count(*)::int as n from activity`;
    expect(count!.n).toBe(300);
    const [pk] = await sql<{ def: string }[]>`select pg_get_constraintdef(oid) as def from pg_constraint where conname = 'activity_pkey'`;
    expect(pk!.def).toBe('PRIMARY KEY (studio_id, key_id, at, id)');
    await sql.begin(async (tx) => {
      await tx`set local enable_seqscan = off`;
      const plan = (await tx.unsafe(`explain select * from activity where studio_id = 'std_a' and request_id = 'req_000000000000000150' and length(request_id) < 26`))
        .map((r) => Object.values(r)[0]).join('\n');
      expect(plan).toContain('activity_studio_request_before_00009');
    });
    const [old] = await sql<{ keyId: string }[]>`select key_id as "keyId" from activity where studio_id = 'std_a' and request_id = 'req_000000000000000150'`;
    expect(old!.keyId).toBe('key_0');
  } finally {
    await sql.end();
  }
});
