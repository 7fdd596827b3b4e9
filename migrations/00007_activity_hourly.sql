-- Calls and errors per studio and hour, kept by the gateway's activity writer in the same
-- transaction as the entries, so the dashboard's chart reads at most 720 rows per studio
-- (30 days) instead of counting a month of entries (1,000,000 for a busy studio: 0.5 s).
create table activity_hourly (
  studio_id text not null,
  hour      timestamptz not null,
  calls     integer not null default 0,
  errors    integer not null default 0,
  primary key (studio_id, hour)
);

insert into activity_hourly (studio_id, hour, calls, errors)
select studio_id, date_trunc('hour', at, 'UTC'), count(*), count(*) filter (where outcome <> 'success')
from activity group by 1, 2;
