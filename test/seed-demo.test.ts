/**
 * `seed:demo` is all or nothing: a failure at its last step (the keys) leaves no half-made
 * studio behind, on real Postgres, in a database of this file's own.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { loadConfig, randomBase62 } from '@studio/shared';
import { createSql, type Sql } from '@studio/shared/io';
import postgres from 'postgres';
import { seedDemo } from '../scripts/lib/seed';

const base = process.env.TEST_DATABASE_URL!;
const dbName = `studio_seed_${randomBase62(10).toLowerCase()}`;
const dbUrl = Object.assign(new URL(base), { pathname: `/${dbName}` }).href;
const config = loadConfig({ DATABASE_URL: dbUrl });
let sql: Sql;

beforeAll(async () => {
  const a = postgres(base, { max: 1, onnotice: () => {} });
  await a.unsafe(`create database ${dbName} template ${process.env.TEST_TEMPLATE_DB}`);
  await a.end();
  sql = createSql(dbUrl, { max: 2 });
});

afterAll(async () => {
  await sql?.end({ timeout: 2 });
  const a = postgres(base, { max: 1, onnotice: () => {} });
  await a.unsafe(`drop database if exists ${dbName} with (force)`);
  await a.end();
});

const TABLES = ['studios', 'members', 'instructors', 'locations', 'classes', 'occurrences', 'sites', 'api_keys'];
async function counts() {
  const out: Record<string, number> = {};
  for (const t of TABLES) {
    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from ${sql(t)}`;
    out[t] = row!.n;
  }
  return out;
}

test('a failure at the last step (the keys) leaves no studio, instructor, class or site behind', async () => {
  await sql.unsafe(`
    create function refuse_api_key() returns trigger language plpgsql as $$
    begin raise exception 'api_keys refused by the test'; end $$;
    create trigger refuse_api_key before insert on api_keys for each row execute function refuse_api_key()`);
  await expect(seedDemo(sql, config)).rejects.toThrow('api_keys refused by the test');
  expect(await counts()).toEqual(Object.fromEntries(TABLES.map((t) => [t, 0])));

  await sql.unsafe('drop trigger refuse_api_key on api_keys; drop function refuse_api_key()');
  const demo = await seedDemo(sql, config);
  expect(demo.keys.publishable).toBeTruthy();
  expect(demo.keys.secret).toBeTruthy();
  const after = await counts();
  // the live studio and its default sandbox, each seeded alike, each with a key of each kind
  expect(after).toMatchObject({ studios: 2, members: 2 * demo.created.members, sites: 2, api_keys: 4 });
  expect(after.instructors).toBe(2 * demo.created.instructors);
  expect(after.classes).toBe(2 * demo.created.classes);
  expect(after.occurrences).toBe(2 * demo.created.occurrences);
  const studios = await sql<
    { id: string; liveStudioId: string | null }[]
  >`select id, live_studio_id from studios order by live_studio_id nulls first`;
  expect([...studios]).toEqual([
    { id: demo.studio.id, liveStudioId: null },
    { id: demo.sandbox.id, liveStudioId: demo.studio.id },
  ]);
}, 20_000);
