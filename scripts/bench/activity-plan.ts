import { chartQuery, entryQuery, pageRoundQuery } from '@studio/dashboard/tooling';
import { loadConfig, newRequestId, randomBase62 } from '@studio/shared';
import { createSql } from '@studio/shared/io';
import type { PendingQuery, Row } from 'postgres';
/**
 * The `activity-plan` case (`bun run bench activity-plan`): the dashboard's activity queries on a busy studio. A
 * scratch database gets 1,000,000 entries (20,000 with --quick) for one studio spread over the last 30 days, made with four
 * busy keys and one rare one (a call in a thousand), and 200,000 for another studio, in batches of a key and
 * minute as the gateway writes them (migration 00017); then prints EXPLAIN (ANALYZE, BUFFERS) of the dashboard's
 * queries as it sends them: a page's first round of batches (all keys, and one rare key), a deep page's, the chart,
 * and the request-id search (an id carrying its time, and one made before ids did). Each must read the batches'
 * indexes only (`(studio_id, last_at, id)`, the key `(studio_id, key_id, last_at, id)`, and for ids made before they
 * carried their time the index of the batches that begin with one): it reports how many read activity sequentially.
 */
import postgres from 'postgres';
import { migrate } from '../lib/migrate';
import { caseFlags, report } from './report';

const ROWS = caseFlags.quick ? 20_000 : 1_000_000;
const base = loadConfig().DATABASE_URL;
const dbName = `studio_plan_${randomBase62(8).toLowerCase()}`;
const url = Object.assign(new URL(base), { pathname: `/${dbName}` }).href;
await migrate(url);
const sql = createSql(url, { max: 1 });
let seqScans = 0;
try {
  await sql`insert into studios (id, name, slug, timezone) values ('std_busy', 'Busy', 'busy', 'UTC'), ('std_other', 'Other', 'other', 'UTC')`;
  const t0 = performance.now();
  for (const [studio, n] of [
    ['std_busy', ROWS],
    ['std_other', Math.round(ROWS / 5)],
  ] as const) {
    await sql`
      insert into activity_batches (studio_id, key_id, first_at, last_at, at, operation_id, method, path, status,
        duration_ms, request_id, problem_code, trace_id, query, problem_detail, client_address, user_agent, refused_count)
      select ${studio}, key_id, min(at), max(at), array_agg(at order by at), array_agg('managementListClasses'::text),
             array_agg('GET'::text), array_agg('/v1/classes'::text), array_agg(status order by at), array_agg(1.5::real),
             array_agg(request_id order by at), array_agg(null::text), array_agg(trace_id order by at), array_agg(null::text),
             array_agg(null::text), array_agg(null::text), array_agg(null::text), array_agg(null::int)
      from (select case when g % 1000 = 0 then 'key_rare' else 'key_busy' || (g % 4) end as key_id,
                   (case when g % 20 = 0 then 422 else 200 end)::smallint as status,
                   -- the rare key's ids as ids were made before they carried their time (shorter than 26)
                   case when g % 1000 = 0 then 'req_' || ${studio} || g else 'req_' || lpad(g::text, 24, '0') end as request_id,
                   now() - make_interval(secs => (g::float8 / ${n}) * 30 * 86400) as at, md5(g::text) as trace_id
            from generate_series(1, ${n}) g) c
      group by key_id, date_trunc('minute', at, 'UTC')`;
  }
  // what the gateway's writer keeps as it records (activity_hourly), built here in one go
  await sql`insert into activity_hourly (studio_id, hour, calls, errors)
    select studio_id, date_trunc('hour', at, 'UTC'), count(*), count(*) filter (where outcome <> 'success') from activity group by 1, 2`;
  // and a thousand other studios' hours, so the rollup is the size it would be in production
  await sql`insert into activity_hourly (studio_id, hour, calls, errors)
    select 'std_other' || s, date_trunc('hour', now(), 'UTC') - make_interval(hours => h), 10, 1
    from generate_series(1, 1000) s, generate_series(0, 719) h`;
  // one call as the gateway records it now: its request id carries its time
  const recent = Date.now() - 3_600_000;
  const timedId = newRequestId(recent);
  await sql`insert into activity (studio_id, key_id, method, path, status, outcome, duration_ms, request_id, at)
    values ('std_busy', 'key_busy1', 'GET', '/v1/classes', 200, 'success', 1.5, ${timedId}, ${new Date(recent)})`;
  await sql`analyze activity_batches`;
  await sql`analyze activity_hourly`;
  console.log(
    `${ROWS.toLocaleString()} entries for std_busy (+${Math.round(ROWS / 5).toLocaleString()} for another studio) in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
  );
  const from = new Date(Date.now() - 30 * 86_400_000);
  const explain = async <T extends readonly object[]>(title: string, query: PendingQuery<T>) => {
    const plan = (await sql<Row[]>`explain (analyze, buffers) ${query}`).map(
      (r) => (r['QUERY PLAN'] ?? r.queryPlan) as string,
    );
    console.log(`\n${title}\n${plan.map((l) => `  ${l}`).join('\n')}`);
    if (plan.some((l) => /Seq Scan on activity/.test(l))) seqScans++; // on activity_batches or activity_hourly
  };
  // the dashboard's own queries (dashboard/src/activity/service.ts), with the filters its pages send
  const filters = {
    key: '',
    operation: '',
    outcome: '',
    from: from.toISOString().slice(0, 10),
    to: new Date().toISOString().slice(0, 10),
    after: '',
  };
  await explain(
    "List, a month range, first page's first round of 4 batches, all keys (the dashboard's query):",
    pageRoundQuery(sql, 'std_busy', filters, null, 4),
  );
  await explain(
    'List, one key that made one call in a thousand, a round of 64 batches:',
    pageRoundQuery(sql, 'std_busy', { ...filters, key: 'key_rare' }, null, 64),
  );
  await explain(
    "Chart, 30 days per day (the dashboard's query, on activity_hourly):",
    chartQuery(sql, 'std_busy', '30d'),
  );
  const [deep] = await sql<{ id: string; atUs: string }[]>`
    select id::text, (extract(epoch from at) * 1000000)::bigint::text as at_us from activity where studio_id = 'std_busy' order by at desc, id desc offset ${Math.floor(ROWS / 2)} limit 1`;
  await explain(
    `List, page ${(Math.floor(ROWS / 100) + 1).toLocaleString()} (after (at, id), as the "Older entries" link sends it), a round of 16 batches:`,
    pageRoundQuery(sql, 'std_busy', { ...filters, from: '', to: '', after: `${deep!.atUs}.${deep!.id}` }, null, 16),
  );
  await explain(
    'Request id search, an id carrying its time (the batches ending within the minute after it):',
    entryQuery(sql, 'std_busy', timedId),
  );
  await explain(
    'Request id search, an id made before ids carried their time (the batches that begin with one):',
    entryQuery(sql, 'std_busy', `req_std_busy${Math.floor(ROWS / 2)}`),
  );
  report({ seqScans });
} finally {
  await sql.end();
  const admin = postgres(Object.assign(new URL(base), { pathname: '/postgres' }).href, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
