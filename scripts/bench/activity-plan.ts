#!/usr/bin/env bun
/**
 * `bun run bench:activity-plan`: the dashboard's activity queries on a busy studio. A scratch
 * database gets 1,000,000 entries for one studio spread over the last 30 days (and 200,000
 * for another), then prints EXPLAIN (ANALYZE, BUFFERS) of the list query over a month range
 * and of the 30-day chart query, as the dashboard sends them. Both must be index range
 * scans of (studio_id, at): the script exits 1 if either plan reads the table sequentially.
 */
import postgres from 'postgres';
import { loadConfig } from '@studio/shared';
import { randomBase62 } from '@studio/shared/base62';
import { migrate } from '../lib/migrate';

const ROWS = Number(process.argv[2] ?? 1_000_000);
const base = loadConfig().DATABASE_URL;
const dbName = `studio_plan_${randomBase62(8).toLowerCase()}`;
const url = Object.assign(new URL(base), { pathname: `/${dbName}` }).href;
await migrate(url);
const sql = postgres(url, { max: 1, onnotice: () => {} });
let failed = false;
try {
  await sql`insert into studios (id, name, slug, timezone) values ('std_busy', 'Busy', 'busy', 'UTC'), ('std_other', 'Other', 'other', 'UTC')`;
  const t0 = performance.now();
  for (const [studio, n] of [['std_busy', ROWS], ['std_other', Math.round(ROWS / 5)]] as const) {
    await sql`
      insert into activity (studio_id, key_id, operation_id, method, path, status, outcome, duration_ms, request_id, at, trace_id)
      select ${studio}, null, 'managementListClasses', 'GET', '/v1/classes', case when g % 20 = 0 then 422 else 200 end,
             case when g % 20 = 0 then 'client_error' else 'success' end, 1.5, 'req_' || ${studio} || g,
             now() - make_interval(secs => (g::float8 / ${n}) * 30 * 86400), md5(g::text)
      from generate_series(1, ${n}) g`;
  }
  // what the gateway's writer keeps as it records (activity_hourly), built here in one go
  await sql`insert into activity_hourly (studio_id, hour, calls, errors)
    select studio_id, date_trunc('hour', at, 'UTC'), count(*), count(*) filter (where outcome <> 'success') from activity group by 1, 2`;
  // and a thousand other studios' hours, so the rollup is the size it would be in production
  await sql`insert into activity_hourly (studio_id, hour, calls, errors)
    select 'std_other' || s, date_trunc('hour', now(), 'UTC') - make_interval(hours => h), 10, 1
    from generate_series(1, 1000) s, generate_series(0, 719) h`;
  await sql`analyze activity`;
  await sql`analyze activity_hourly`;
  console.log(`${ROWS.toLocaleString()} entries for std_busy (+${Math.round(ROWS / 5).toLocaleString()} for another studio) in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const from = new Date(Date.now() - 30 * 86_400_000);
  const explain = async (title: string, query: string, params: unknown[]) => {
    const plan = (await sql.unsafe(`explain (analyze, buffers) ${query}`, params as never[])).map((r) => r['QUERY PLAN'] as string);
    console.log(`\n${title}\n${plan.map((l) => `  ${l}`).join('\n')}`);
    if (plan.some((l) => /Seq Scan on activity/.test(l))) failed = true; // on activity or activity_hourly
  };
  await explain('List, a month range, first page (the dashboard\'s query):', `
    select a.id::text as id, a.at, a.operation_id, a.method, a.path, a.query, a.status, a.outcome, a.duration_ms, a.request_id,
           a.problem_code, a.trace_id, k.name as key_name, k.hint as key_hint, k.kind as key_kind
    from activity a left join api_keys k on k.id = a.key_id and k.studio_id = a.studio_id
    where a.studio_id = $1 and a.at >= $2 and a.at < $3
    order by a.at desc, a.id desc limit 51`, ['std_busy', from, new Date()]);
  await explain('Chart, 30 days per day (the dashboard\'s query, on activity_hourly):', `
    select date_trunc('day', hour, 'UTC') as at, sum(calls)::int as calls, sum(errors)::int as errors
    from activity_hourly where studio_id = $1 and hour >= $2 and hour < $3 group by 1`, ['std_busy', from, new Date(Date.now() + 86_400_000)]);
  const [deep] = await sql<{ id: string; atUs: string }[]>`
    select id::text, (extract(epoch from at) * 1000000)::bigint::text as "atUs" from activity where studio_id = 'std_busy' order by at desc, id desc offset ${Math.floor(ROWS / 2)} limit 1`;
  await explain(`List, page ${(Math.floor(ROWS / 100) + 1).toLocaleString()} (keyset after (at, id), as the "Older entries" link sends it):`, `
    select a.id, a.at from activity a where a.studio_id = $1
      and (a.at, a.id) < (timestamptz 'epoch' + $2::bigint * interval '1 microsecond', $3::bigint)
    order by a.at desc, a.id desc limit 51`, ['std_busy', deep!.atUs, deep!.id]);
  await explain('Request id search:', `select id from activity where studio_id = $1 and request_id = $2 order by at desc limit 1`, ['std_busy', 'req_std_busy500000']);
  console.log(failed ? '\nRESULT: a sequential scan of activity' : '\nRESULT: index scans only');
} finally {
  await sql.end();
  const admin = postgres(Object.assign(new URL(base), { pathname: '/postgres' }).href, { max: 1, onnotice: () => {} });
  await admin.unsafe(`drop database if exists ${dbName} with (force)`);
  await admin.end();
}
process.exit(failed ? 1 : 0);
