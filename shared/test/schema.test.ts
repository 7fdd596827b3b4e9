/**
 * The schema stays shardable by studio (docs/design/scale-out.md): on every tenant table, each primary,
 * unique and exclusion constraint and each unique index includes studio_id, the column a
 * Citus cluster would distribute by. Reference tables are named here and in docs/scaling.md.
 */
import { afterAll, expect, test } from 'bun:test';
import postgres from 'postgres';

const REFERENCE_TABLES = [
  'studios',
  'api_keys',
  'login_links',
  'dashboard_sessions',
  'schema_migrations',
  'webhook_fanout_cursor',
  'events_retention',
  // one row for the installation: the delivering processes' WEBHOOK_ALLOW_PRIVATE_URLS (migration 00020)
  'webhook_delivery_setting',
];
const url = Object.assign(new URL(process.env.TEST_DATABASE_URL!), {
  pathname: `/${process.env.TEST_TEMPLATE_DB}`,
}).href;
const sql = postgres(url, { max: 1, onnotice: () => {} });
afterAll(() => sql.end());

test('every primary, unique and exclusion key of a tenant table includes studio_id', async () => {
  const keys = await sql<{ table: string; name: string; hasStudio: boolean }[]>`
    select c.relname as table, i.indexrelid::regclass::text as name,
           exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'studio_id' and a.attnum = any(i.indkey)) as "hasStudio"
    from pg_index i join pg_class c on c.oid = i.indrelid
    where c.relnamespace = 'public'::regnamespace and c.relkind = 'r'
      and (i.indisunique or i.indisexclusion or i.indisprimary)`;
  const tenant = keys.filter((k) => !REFERENCE_TABLES.includes(k.table));
  expect(tenant.length).toBeGreaterThan(15);
  expect(tenant.filter((k) => !k.hasStudio).map((k) => `${k.table}: ${k.name}`)).toEqual([]);
  // and every table that is not a reference table has the column at all
  const tables = await sql<{ table: string }[]>`
    select c.relname as table from pg_class c where c.relnamespace = 'public'::regnamespace and c.relkind = 'r'
      and not exists (select 1 from pg_attribute a where a.attrelid = c.oid and a.attname = 'studio_id')`;
  expect(tables.map((t) => t.table).filter((t) => !REFERENCE_TABLES.includes(t))).toEqual([]);
});
