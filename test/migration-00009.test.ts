/**
 * Migration 00009 on a database that already has an activity log: writes go on while it
 * runs; every entry stays, on the new key; older request ids stay findable through the
 * partial index; a row without a key (the gateway never wrote one) does not stop it; and a
 * run cut off at any statement is finished by the next one.
 */
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { cp, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { randomBase62 } from '@studio/shared';
import postgres from 'postgres';
import { MIGRATIONS_DIR, migrate, statementsOf } from '../scripts/lib/migrate';

const FILE = '00009_activity_one_btree.sql';
const base = process.env.TEST_DATABASE_URL!;
const admin = postgres(base, { max: 1, onnotice: () => {} });
const urlOf = (db: string) => Object.assign(new URL(base), { pathname: `/${db}` }).href;
const connect = (db: string) => postgres(urlOf(db), { max: 1, onnotice: () => {} });
const made: string[] = [];
const newDb = () => {
  const db = `studio_m_${randomBase62(10).toLowerCase()}`;
  made.push(db);
  return db;
};

/** The migrations up to 00009 (later ones, 00017's batches, change the log again). */
let upTo00009: string;
/** `migrate` up to 00009. */
const migrateTo00009 = (url: string) => migrate(url, upTo00009);

/** A database at 00008 with a log: 300 entries of three keys (ids of the old format), and one row without a key. */
const at00008 = newDb();
beforeAll(async () => {
  const dir = await mkdtemp(join(tmpdir(), 'migrations-'));
  upTo00009 = await mkdtemp(join(tmpdir(), 'migrations-'));
  try {
    for (const f of (await readdir(MIGRATIONS_DIR)).filter((f) => f < FILE))
      await cp(join(MIGRATIONS_DIR, f), join(dir, f));
    for (const f of (await readdir(MIGRATIONS_DIR)).filter((f) => f <= FILE))
      await cp(join(MIGRATIONS_DIR, f), join(upTo00009, f));
    await migrate(urlOf(at00008), dir);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
  const sql = connect(at00008);
  await sql`
    insert into activity (studio_id, key_id, method, path, status, outcome, duration_ms, request_id, at)
    select 'std_a', 'key_' || (g % 3), 'GET', '/v1/classes', 200, 'success', 1, 'req_' || lpad(g::text, 18, '0'), timestamptz '2026-11-01' + g * interval '1 second'
    from generate_series(1, 300) g`;
  await sql`insert into activity (studio_id, key_id, method, path, status, outcome, duration_ms, request_id, at)
    values ('std_a', null, 'GET', '/v1/x', 200, 'success', 1, 'req_by_hand', now())`;
  await sql.end();
});
afterAll(async () => {
  await rm(upTo00009, { recursive: true, force: true });
  for (const db of made) await admin.unsafe(`drop database if exists ${db} with (force)`);
  await admin.end();
});

/** A copy of the 00008 database. */
async function copy(): Promise<string> {
  const db = newDb();
  await admin.unsafe(`create database ${db} template ${at00008}`);
  return db;
}

/** What 00009 leaves: the entries, the key and the indexes of the log. */
async function stateOf(db: string) {
  const sql = connect(db);
  try {
    const [count] = await sql<{ n: number }[]>`select count(*)::int as n from activity`;
    const indexes = await sql<
      { indexdef: string }[]
    >`select indexdef from pg_indexes where tablename = 'activity' order by indexname`;
    const [pk] = await sql<
      { def: string }[]
    >`select pg_get_constraintdef(oid) as def from pg_constraint where conname = 'activity_pkey'`;
    const checks = await sql`select 1 from pg_constraint where conname = 'activity_key_id_present'`;
    const [old] = await sql<
      { keyId: string }[]
    >`select key_id as "keyId" from activity where studio_id = 'std_a' and request_id = 'req_000000000000000150'`;
    return {
      entries: count!.n,
      key: pk!.def,
      indexes: indexes.map((i) => i.indexdef.replace(/^.* USING /, '')),
      checks: checks.length,
      oldIdKey: old?.keyId,
    };
  } finally {
    await sql.end();
  }
}

const DONE = {
  key: 'PRIMARY KEY (studio_id, key_id, at, id)',
  indexes: ['btree (studio_id, key_id, at, id)', 'btree (studio_id, request_id) WHERE (length(request_id) < 26)'],
  checks: 0,
  oldIdKey: 'key_0',
};

test('00009 lets the gateways write while it runs, keeps every entry on the new key, and the older request ids findable', async () => {
  const db = await copy();
  const sql = connect(db);
  // A dashboard read is under way while the migration runs (its snapshot and its lock on the
  // log): the migration waits for it, and meanwhile the gateways' writes still go in at once.
  const reader = connect(db);
  const writer = connect(db);
  let endRead!: () => void;
  const readEnds = new Promise<void>((r) => (endRead = r));
  let readerIn!: () => void;
  const readerStarted = new Promise<void>((r) => (readerIn = r));
  const reading = reader.begin('isolation level repeatable read', async (tx) => {
    await tx`select count(*) from activity`;
    readerIn();
    await readEnds;
  });
  await readerStarted;
  const migrating = migrateTo00009(urlOf(db));
  try {
    let waiting = false;
    for (const deadline = Date.now() + 10_000; !waiting && Date.now() < deadline; await Bun.sleep(20)) {
      const [row] = await sql<{ waiting: boolean }[]>`
        select count(*) > 0 as waiting from pg_stat_activity where datname = ${db} and wait_event_type = 'Lock' and pid <> pg_backend_pid()`;
      waiting = row!.waiting;
    }
    expect(waiting).toBe(true);
    await writer.begin(async (tx) => {
      await tx`set local lock_timeout = '2s'`;
      await tx`insert into activity (studio_id, key_id, method, path, status, outcome, duration_ms, request_id, at)
        values ('std_a', 'key_1', 'GET', '/v1/classes', 200, 'success', 1, 'req_during_migration', now())`;
    });
  } finally {
    endRead();
    await reading;
    await Promise.all([reader.end(), writer.end(), sql.end()]);
  }
  expect((await migrating)[0]).toBe(FILE);
  // the 300 entries and the one written during the migration; the row without a key is gone
  expect(await stateOf(db)).toEqual({ entries: 301, ...DONE });

  // the search for an older request id reads the partial index
  const check = connect(db);
  try {
    await check.begin(async (tx) => {
      await tx`set local enable_seqscan = off`;
      const plan = await tx.unsafe(
        `explain select * from activity where studio_id = 'std_a' and request_id = 'req_000000000000000150' and length(request_id) < 26`,
      );
      expect(plan.map((r) => Object.values(r)[0]).join('\n')).toContain('activity_studio_request_before_00009');
    });
  } finally {
    await check.end();
  }
});

test('a run of 00009 cut off after any of its statements is finished by the next run', async () => {
  const statements = statementsOf(await Bun.file(join(MIGRATIONS_DIR, FILE)).text());
  expect(statements.length).toBeGreaterThan(10);
  // after each statement, and after all of them (the run that wrote everything but its record)
  for (let done = 1; done <= statements.length; done++) {
    const db = await copy();
    const sql = connect(db);
    try {
      for (const s of statements.slice(0, done)) await sql.unsafe(s);
    } finally {
      await sql.end();
    }
    expect({ done, applied: (await migrateTo00009(urlOf(db)))[0] }).toEqual({ done, applied: FILE });
    expect({ done, ...(await stateOf(db)) }).toEqual({ done, entries: 300, ...DONE });
    await admin.unsafe(`drop database ${db} with (force)`);
  }
}, 30_000); // a database per statement

test('an index a failed concurrent build of 00009 left behind, invalid, is built afresh by the next run', async () => {
  const db = await copy();
  const sql = connect(db);
  const indexOf = async () => {
    const [index] = await sql<{ valid: boolean; unique: boolean; def: string }[]>`
      select i.indisvalid as valid, i.indisunique as unique, pg_get_indexdef(i.indexrelid) as def
      from pg_index i join pg_class c on c.oid = i.indexrelid where c.relname = 'activity_studio_request_before_00009'`;
    return index;
  };
  try {
    // A build of that name that failed part-way, as a lock_timeout or a cancel would leave it:
    // every entry has studio std_a, so this unique build fails and leaves the index invalid.
    await expect(
      sql.unsafe('create unique index concurrently activity_studio_request_before_00009 on activity (studio_id)'),
    ).rejects.toThrow();
    expect(await indexOf()).toMatchObject({ valid: false, unique: true });

    // `if not exists` alone would skip the statement and keep the invalid index for good
    expect((await migrateTo00009(urlOf(db)))[0]).toBe(FILE);
    expect(await indexOf()).toEqual({
      valid: true,
      unique: false,
      def: 'CREATE INDEX activity_studio_request_before_00009 ON public.activity USING btree (studio_id, request_id) WHERE (length(request_id) < 26)',
    });
  } finally {
    await sql.end();
  }
  // and the log is as a clean run leaves it (the entries, the key, the two indexes)
  expect(await stateOf(db)).toEqual({ entries: 300, ...DONE });
});
