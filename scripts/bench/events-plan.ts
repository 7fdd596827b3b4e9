import { deleteBatch, findQuery, pageQuery } from '@studio/management-service/tooling';
import { EVENT_TYPES, loadConfig, randomBase62 } from '@studio/shared';
import { createSql } from '@studio/shared/io';
/**
 * The `events-plan` case (`bun run bench events-plan`): the feed's queries at 10 million events. A scratch database
 * gets 10,000,000 events (100,000 with --quick) of one studio (spread over 30 days and over the transaction ids below the
 * current one, several events per transaction, every type) and 1,000,000 of 100 other studios;
 * then prints EXPLAIN (ANALYZE, BUFFERS) of the queries GET /v1/events sends, built by the
 * service's own functions (management-service/src/events/queries.ts): the first page, a page
 * deep in the feed (keyset after a (xid, seq)), the last page, a filtered page (a key that reads
 * coupons only), the lookup of an `after=` id, and one retention batch. Every page must be an
 * index scan under its LIMIT: it reports how many plans read events sequentially or off the index.
 * The scratch database is dropped at the end.
 */
import postgres, { type PendingQuery, type Row } from 'postgres';
import { migrate } from '../lib/migrate';
import { caseFlags, report } from './report';

class RollBack extends Error {}
const first = async <T>(q: Promise<T[]>): Promise<T> => (await q)[0] as T;

const ROWS = caseFlags.quick ? 100_000 : 10_000_000;
const base = loadConfig().DATABASE_URL;
const dbName = `studio_evplan_${randomBase62(8).toLowerCase()}`;
const url = Object.assign(new URL(base), { pathname: `/${dbName}` }).href;
await migrate(url);
const sql = createSql(url, { max: 1 });
let offIndex = 0;
try {
  await sql`insert into studios (id, name, slug, timezone) select 'std_busy', 'Busy', 'busy', 'UTC'`;
  await sql`insert into studios (id, name, slug, timezone) select 'std_o' || s, 'Other', 'other-' || s, 'UTC' from generate_series(1, 100) s`;
  // the transaction ids the events claim: all below the current one (so every event is served), about 3 events each
  const { top } = await first(sql<{ top: string }[]>`select pg_current_xact_id()::text as top`);
  const types = [...EVENT_TYPES];
  const t0 = performance.now();
  /** Events `from`..`to` of `total` (their place in time and in transaction ids), of one studio or spread over `studios`. */
  const insert = (studio: string, from: number, to: number, total: number, studios = 1) => sql`
    insert into events (studio_id, id, type, resource, xid, created_at, data, request_id, trace_id)
    select ${studios === 1 ? sql`${studio}` : sql`${studio} || (g % ${studios} + 1)`},
           'evt_' || lpad(to_hex(g), 22, '0'), t.type, split_part(t.type, '.', 1),
           (3 + (g::numeric * (${top}::numeric - 4) / ${total})::bigint)::text::xid8,
           now() - make_interval(secs => (1 - g::float8 / ${total}) * 30 * 86400),
           jsonb_build_object('object', jsonb_build_object('id', 'ins_' || g, 'name', 'Ana Ruiz', 'active', true)),
           'req_' || g, md5(g::text)
    from generate_series(${from}::bigint, ${to}::bigint) g
    join lateral (select (${types}::text[])[1 + g % ${types.length}] as type) t on true`;
  // in slices of a million, each its own transaction (a single statement would hold back every feed on the server meanwhile)
  const SLICE = 1_000_000;
  for (let done = 0; done < ROWS; done += SLICE) {
    await insert('std_busy', done + 1, Math.min(done + SLICE, ROWS), ROWS);
    process.stdout.write(`\r${Math.min(done + SLICE, ROWS).toLocaleString()} events…`);
  }
  for (let done = 0; done < ROWS / 10; done += SLICE)
    await insert('std_o', done + 1, Math.min(done + SLICE, ROWS / 10), ROWS / 10, 100);
  await sql`vacuum analyze events`;
  console.log(
    `\r${ROWS.toLocaleString()} events for std_busy (+${Math.round(ROWS / 10).toLocaleString()} for 100 other studios) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  const { size } = await first(
    sql<{ size: string }[]>`select pg_size_pretty(pg_total_relation_size('events')) as size`,
  );
  console.log(`events: ${size} with its indexes`);

  /** Prints the plan; a sequential scan of events fails the run, and so does a page not read from the feed's index. */
  const explain = async <T extends readonly object[]>(title: string, query: PendingQuery<T>, index = 'events_pkey') => {
    const plan = (await sql<Row[]>`explain (analyze, buffers) ${query}`).map(
      (r) => (r['QUERY PLAN'] ?? r.queryPlan) as string,
    );
    console.log(`\n${title}\n${plan.map((l) => `  ${l}`).join('\n')}`);
    if (
      plan.some((l) => /Seq Scan on events(?!_)/.test(l)) ||
      !plan.some((l) => l.includes(`Index Scan using ${index} on events`))
    )
      offIndex++;
  };
  const at = async (offset: number) => {
    return first(sql<{ xid: string; seq: string }[]>`
      select xid::text as xid, seq::text as seq from events where studio_id = 'std_busy' order by events.xid, events.seq offset ${offset} limit 1`);
  };
  const all = { types: null, resources: null } as const;
  await explain(
    'First page (25), every type, a key that reads everything:',
    pageQuery(sql, 'std_busy', { ...all, from: null, limit: 25 }),
  );
  await explain(
    `A page deep in the feed (after event ${(ROWS / 2).toLocaleString()}, as a cursor or after= sends it):`,
    pageQuery(sql, 'std_busy', { ...all, from: await at(Math.floor(ROWS / 2)), limit: 100 }),
  );
  await explain(
    'The last page (a consumer that is up to date polls this):',
    pageQuery(sql, 'std_busy', { ...all, from: await at(ROWS - 10), limit: 100 }),
  );
  await explain(
    'A filtered page: a key that reads coupons only, type=coupon.created (at most 1,000 events scanned):',
    pageQuery(sql, 'std_busy', {
      types: ['coupon.created'],
      resources: ['coupon'],
      from: await at(Math.floor(ROWS / 3)),
      limit: 25,
    }),
  );
  const { id } = await first(
    sql<
      { id: string }[]
    >`select id from events where studio_id = 'std_busy' order by xid, seq offset ${Math.floor(ROWS / 4)} limit 1`,
  );
  await explain(
    "after=<id>: the event's place, and GET /v1/events/{id}:",
    findQuery(sql, 'std_busy', id),
    'events_studio_id_id_key',
  );
  // one retention batch, in a transaction rolled back (the cutoff: the oldest day of the 30)
  await sql`update events_retention set deleted_before = now() - interval '29 days'`;
  await sql
    .begin(async (tx) => {
      const plan = (await tx<Row[]>`explain (analyze, buffers) ${deleteBatch(tx, 1000)}`).map(
        (r) => (r['QUERY PLAN'] ?? r.queryPlan) as string,
      );
      console.log(
        `\nOne retention batch (1,000 oldest events, rolled back here):\n${plan.map((l) => `  ${l}`).join('\n')}`,
      );
      if (plan.some((l) => /Seq Scan on events(?!_)/.test(l))) offIndex++;
      throw new RollBack();
    })
    .catch((e) => {
      if (!(e instanceof RollBack)) throw e;
    });
  report({ offIndex });
} finally {
  await sql.end();
  const admin = postgres(Object.assign(new URL(base), { pathname: '/postgres' }).href, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
