-- The activity log keeps one row per key, minute and flush, its entries side by side in arrays, instead of one row
-- per call. Every call writes an entry, and as a row each cost Postgres 7-9 µs of CPU (the B-tree's key about a
-- third, reading thirteen fields, a tuple slot, the heap), on the cores the gateway serves from: the cached read's
-- throughput gap and its tail (docs/benchmarks.md). As one row a flush, the index, the slot and the heap are paid once
-- for hundreds of entries.
--
--   * A batch holds the entries of one studio's key written by one flush in one UTC minute (a check says so), so a
--     batch spans less than a minute: the entry of a request id, whose id carries its time, lies in a batch whose
--     `last_at` is within the minute after it. An id from before ids carried their time has an index of its own.
--   * The dashboard reads batches newest `last_at` first, by studio (`activity_batches_studio`) or by key (the key),
--     and places an entry once no unread batch can hold a later one: every entry of a batch is at or before its
--     `last_at` (gateway/src/dashboard/activity.ts).
--   * `activity` is now a view with the old table's columns, one row per entry, for whoever reads the log in SQL. An
--     entry's id is its batch's id times 100,000 plus its place in the batch (a batch holds at most 10,000 entries),
--     so ids still break ties within a millisecond in the order entries were written. Its outcome follows from its
--     status, as the gateway always set it. Rows inserted into the view (by hand, or by a gateway still running the
--     code before this migration, whose COPY the trigger takes) become batches of one entry.
--
-- The entries already written move into batches here, grouped by key and minute, while the gateways keep writing:
-- the table is locked only to move what they wrote meanwhile, then dropped.
set local lock_timeout = '10s';

create table activity_batches (
  id             bigint generated always as identity,
  studio_id      text not null,
  key_id         text not null,
  first_at       timestamptz not null,
  last_at        timestamptz not null,
  at             timestamptz[] not null,
  operation_id   text[] not null,
  method         text[] not null,
  path           text[] not null,
  status         smallint[] not null,
  duration_ms    real[] not null,
  request_id     text[] not null,
  problem_code   text[] not null,
  trace_id       text[] not null,
  query          text[] not null,
  problem_detail text[] not null,
  client_address text[] not null,
  user_agent     text[] not null,
  refused_count  int[] not null,
  primary key (studio_id, key_id, last_at, id),
  constraint activity_batches_one_minute check (
    first_at <= last_at and date_trunc('minute', first_at, 'UTC') = date_trunc('minute', last_at, 'UTC')),
  constraint activity_batches_size check (cardinality(at) between 1 and 10000)
);
create index activity_batches_studio on activity_batches (studio_id, last_at, id);
-- Request ids made before they carried their time (shorter than 26 characters: migration 00009) are found by this
-- index, which only batches that begin with one enter: the gateway has not made such an id since, so its batches
-- cost the index one test of their first id.
create index activity_batches_untimed_request on activity_batches using gin (request_id)
  where length(request_id[1]) < 26;

-- lz4 compresses a batch's arrays at a fraction of pglz's CPU; a Postgres built without it keeps pglz
do $$
begin
  alter table activity_batches
    alter column at set compression lz4, alter column operation_id set compression lz4,
    alter column method set compression lz4, alter column path set compression lz4,
    alter column status set compression lz4, alter column duration_ms set compression lz4,
    alter column request_id set compression lz4, alter column problem_code set compression lz4,
    alter column trace_id set compression lz4, alter column query set compression lz4,
    alter column problem_detail set compression lz4, alter column client_address set compression lz4,
    alter column user_agent set compression lz4, alter column refused_count set compression lz4;
exception when feature_not_supported then
  null;
end $$;

-- Moves the entries of `activity` into batches: one per key and minute, split past 10,000. Request ids from before
-- they carried their time come first in their batch, so that each batch holding one enters the index above.
create function pg_temp.activity_move() returns void language sql as $$
  with moved as (delete from activity returning *)
  insert into activity_batches (studio_id, key_id, first_at, last_at, at, operation_id, method, path, status,
                                duration_ms, request_id, problem_code, trace_id, query, problem_detail, client_address,
                                user_agent, refused_count)
  select studio_id, key_id, min(at), max(at), array_agg(at order by rn), array_agg(operation_id order by rn),
         array_agg(method order by rn), array_agg(path order by rn), array_agg(status order by rn),
         array_agg(duration_ms order by rn), array_agg(request_id order by rn), array_agg(problem_code order by rn),
         array_agg(trace_id order by rn), array_agg(query order by rn), array_agg(problem_detail order by rn),
         array_agg(client_address order by rn), array_agg(user_agent order by rn), array_agg(refused_count order by rn)
  from (select *, row_number() over (partition by studio_id, key_id, date_trunc('minute', at, 'UTC')
                                     order by length(request_id) >= 26, at, id) as rn
        from moved) a
  group by studio_id, key_id, date_trunc('minute', at, 'UTC'), (rn - 1) / 10000
  order by min(at);
$$;
-- The log as it is, while the gateways keep writing: this takes no lock that stops their COPYs.
select pg_temp.activity_move();
-- Then, the table locked, what they wrote meanwhile (a moment's worth), and the table goes.
lock table activity in access exclusive mode;
select pg_temp.activity_move();
drop table activity;
drop function pg_temp.activity_move();

create view activity as
select b.id * 100000 + e.n - 1 as id, b.studio_id, b.key_id, e.operation_id, e.method, e.path, e.status,
       case when e.status >= 500 then 'server_error' when e.status >= 400 then 'client_error' else 'success' end
         as outcome,
       e.duration_ms, e.request_id, e.at, e.problem_code, e.trace_id, e.query, e.problem_detail, e.client_address,
       e.user_agent, e.refused_count
from activity_batches b
cross join lateral unnest(b.at, b.operation_id, b.method, b.path, b.status, b.duration_ms, b.request_id,
                          b.problem_code, b.trace_id, b.query, b.problem_detail, b.client_address, b.user_agent,
                          b.refused_count)
  with ordinality as e(at, operation_id, method, path, status, duration_ms, request_id, problem_code, trace_id, query,
                       problem_detail, client_address, user_agent, refused_count, n);

create function activity_insert() returns trigger language plpgsql as $$
begin
  insert into activity_batches (studio_id, key_id, first_at, last_at, at, operation_id, method, path, status,
                                duration_ms, request_id, problem_code, trace_id, query, problem_detail, client_address,
                                user_agent, refused_count)
  values (new.studio_id, new.key_id, new.at, new.at, array[new.at], array[new.operation_id], array[new.method],
          array[new.path], array[new.status], array[new.duration_ms], array[new.request_id], array[new.problem_code],
          array[new.trace_id], array[new.query], array[new.problem_detail], array[new.client_address],
          array[new.user_agent], array[new.refused_count]);
  return new;
end $$;
create trigger activity_insert instead of insert on activity for each row execute function activity_insert();
