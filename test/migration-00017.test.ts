/**
 * Migration 00017 on a database that already has an activity log: every entry moves into batches of one key and
 * minute (at most 10,000 entries each) and reads back through the `activity` view as it was, every column and the
 * order; and a gateway still running the code from before, which copies rows into `activity`, keeps writing.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { randomBase62 } from '@studio/shared';
import postgres from 'postgres';
import { MIGRATIONS_DIR, migrate } from '../scripts/lib/migrate';

const FILE = '00017_activity_batches.sql';
const base = process.env.TEST_DATABASE_URL!;
const admin = postgres(base, { max: 1, onnotice: () => {} });
const urlOf = (db: string) => Object.assign(new URL(base), { pathname: `/${db}` }).href;
const made: string[] = [];
/** A new database, a copy of `template` when given. */
async function newDb(template?: string): Promise<string> {
  const db = `studio_m_${randomBase62(10).toLowerCase()}`;
  made.push(db);
  if (template) await admin.unsafe(`create database ${db} template ${template}`);
  return db;
}
const COLUMNS = `studio_id, key_id, operation_id, method, path, status, outcome, duration_ms, request_id, at,
  problem_code, trace_id, query, problem_detail, client_address, user_agent, refused_count`;

/** A database at 00016, its log empty. */
let at00016: string;
beforeAll(async () => {
  at00016 = await newDb();
  const dir = await mkdtemp(join(tmpdir(), 'migrations-'));
  try {
    for (const f of (await readdir(MIGRATIONS_DIR)).filter((f) => f < FILE))
      await cp(join(MIGRATIONS_DIR, f), join(dir, f));
    await migrate(urlOf(at00016), dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
afterAll(async () => {
  for (const db of made) await admin.unsafe(`drop database if exists ${db} with (force)`);
  await admin.end();
});

test('00017 moves every entry into batches of a key and minute and reads them back as they were; old writers still write', async () => {
  const url = urlOf(await newDb(at00016));
  const sql = postgres(url, { max: 1, onnotice: () => {} });
  try {
    await movesAndReadsBack(sql, url);
  } finally {
    await sql.end();
  }
});

async function movesAndReadsBack(sql: postgres.Sql, url: string) {
  // 12,000 entries: 10,500 of one key in one minute (two batches), the rest over three keys and an hour, with every
  // column set on some and null on others, and request ids of both formats
  await sql.unsafe(`
    insert into activity (${COLUMNS})
    select 'std_a', case when g <= 10500 then 'key_busy' else 'key_' || (g % 3) end,
           case when g % 5 = 0 then null else 'managementListClasses' end, 'GET', '/v1/classes',
           case when g % 7 = 0 then 503 when g % 11 = 0 then 429 else 200 end,
           case when g % 7 = 0 then 'server_error' when g % 11 = 0 then 'client_error' else 'success' end,
           g / 100.0, case when g % 2 = 0 then 'req_' || g else 'req_' || lpad(g::text, 26, '0') end,
           case when g <= 10500 then timestamptz '2026-11-01 10:00:00+00' + (g % 50000) * interval '5 milliseconds'
                else timestamptz '2026-11-01 11:00:00+00' + g * interval '300 milliseconds' end,
           case when g % 7 = 0 then 'service_unavailable' end, md5(g::text), case when g % 3 = 0 then 'limit=5' end,
           case when g % 7 = 0 then 'détail ' || g end, '10.0.0.' || (g % 250), case when g % 4 = 0 then 'curl/8' end,
           case when g % 11 = 0 then g % 9 + 1 end
    from generate_series(1, 12000) g`);
  const read = () => sql.unsafe(`select ${COLUMNS} from activity order by at, request_id`);
  const before = await read();
  expect(before).toHaveLength(12_000);

  expect((await migrate(url))[0]).toBe(FILE);
  expect(await read()).toEqual(before);
  const [batches] = await sql<{ n: number; most: number; keys: number }[]>`
    select count(*)::int as n, max(cardinality(at)) as most, count(distinct key_id)::int as keys from activity_batches`;
  // key_busy's minute split in two (10,000 and 500); the other keys' 1,500 entries over 8 minutes each
  expect(batches!.most).toBe(10_000);
  expect(batches!.keys).toBe(4);
  expect(batches!.n).toBeLessThan(40);
  // every batch that holds a request id from before ids carried their time begins with one, so the index of such
  // batches (the dashboard's search for those ids) holds them all
  const [untimed] = await sql<{ holding: number; beginning: number }[]>`
    select count(*) filter (where exists (select 1 from unnest(request_id) r where length(r) < 26))::int as holding,
           count(*) filter (where length(request_id[1]) < 26)::int as beginning
    from activity_batches`;
  expect(untimed!.holding).toBeGreaterThan(0);
  expect(untimed!.beginning).toBe(untimed!.holding);
  const [ids] = await sql<{ n: number }[]>`select count(distinct id)::int as n from activity`;
  expect(ids!.n).toBe(12_000);

  // a gateway from before the migration: its COPY of one row a call into `activity` becomes a batch of one
  const copy = await sql.unsafe(`copy activity (${COLUMNS}) from stdin`).writable();
  await pipeline(
    (async function* () {
      yield 'std_a\tkey_late\t\\N\tGET\t/v1/late\t200\tsuccess\t1.5\treq_late\t2026-11-29 10:00:00+00\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\t\\N\n';
    })(),
    copy,
  );
  const late = await sql`select key_id, path, outcome, at from activity where request_id = 'req_late'`;
  expect(late.map((r) => [r.key_id, r.path, r.outcome, r.at.toISOString()])).toEqual([
    ['key_late', '/v1/late', 'success', '2026-11-29T10:00:00.000Z'],
  ]);
  // and the table it wrote to is gone: the view is the log
  const [kind] = await sql<{ relkind: string }[]>`select relkind from pg_class where relname = 'activity'`;
  expect(kind!.relkind).toBe('v');
}

test('the gateways keep writing while 00017 moves the log: only the last moment waits for the lock', async () => {
  const db = await newDb(at00016);
  const sql = postgres(urlOf(db), { max: 1, onnotice: () => {} });
  const writer = postgres(urlOf(db), { max: 1, onnotice: () => {} });
  const insert = (requestId: string) =>
    writer.begin(async (tx) => {
      await tx`set local lock_timeout = '2s'`;
      await tx.unsafe(`insert into activity (${COLUMNS}) values ('std_a', 'key_0', null, 'GET', '/v1/x', 200, 'success',
      1, '${requestId}', now(), null, null, null, null, null, null, null)`);
    });
  try {
    // enough entries that moving them takes a while
    await sql.unsafe(`insert into activity (${COLUMNS})
      select 'std_a', 'key_' || (g % 5), 'managementListClasses', 'GET', '/v1/classes', 200, 'success', 1,
             'req_' || g, now() - g * interval '10 milliseconds', null, md5(g::text), null, null, '10.0.0.1', null, null
      from generate_series(1, 300000) g`);
    const migrating = migrate(urlOf(db));
    let moving = false;
    for (const deadline = Date.now() + 20_000; !moving && Date.now() < deadline; await Bun.sleep(10)) {
      // the migration's first move has begun: its delete holds the table's row-exclusive lock
      const [row] = await sql<{ n: number }[]>`
        select count(*)::int as n from pg_locks
        where relation = 'activity'::regclass and mode = 'RowExclusiveLock' and granted and pid <> pg_backend_pid()`;
      moving = row!.n > 0;
    }
    expect(moving).toBe(true);
    // a gateway from before the migration writes while the log moves, without waiting for it
    const started = Date.now();
    await insert('req_while_moving');
    expect(Date.now() - started).toBeLessThan(1_000);
    expect((await migrating)[0]).toBe(FILE);
    const [counted] = await sql<{ n: number; during: number }[]>`
      select count(*)::int as n, count(*) filter (where request_id = 'req_while_moving')::int as during from activity`;
    expect(counted).toEqual({ n: 300_001, during: 1 });
  } finally {
    await Promise.all([sql.end(), writer.end()]);
  }
}, 60_000);
