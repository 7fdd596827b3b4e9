-- The change feed (docs/design/events.md): every Management write records its events
-- here, in its own transaction (the outbox), and GET /v1/events serves them.

-- xid is the writing transaction's id. The feed serves a studio's events by (xid, seq), and only
-- those with xid below the oldest transaction still running (pg_snapshot_xmin): every transaction
-- below it has ended and every later one has a larger xid, so the part already served never changes
-- and a reader resuming after an event misses none. seq orders the events of one transaction.
create table events (
  studio_id  text not null references studios (id),
  seq        bigint generated always as identity,
  id         text not null,
  type       text not null,
  resource   text not null,                                -- the type's noun: what a key must be able to read
  xid        xid8 not null default pg_current_xact_id(),
  created_at timestamptz not null default now(),
  data       jsonb not null,                               -- { object, previousAttributes? }
  request_id text,
  trace_id   text,
  primary key (studio_id, xid, seq),                       -- the feed's order within a studio
  unique (studio_id, id)                                   -- GET /v1/events/{id}, and after=<id>
);
-- the webhook dispatcher's fan-out reads every studio's events in the same order
create index events_xid on events (xid, seq);
-- retention deletes the oldest, in batches
create index events_created on events (created_at);

-- How far retention has deleted (one row for the whole database, a reference table in
-- docs/scaling.md): an after=<id> that is not found and was made before this instant names an
-- event retention deleted (410 events_expired), not one that never existed (404).
create table events_retention (
  singleton      boolean primary key default true check (singleton),
  deleted_before timestamptz not null default '-infinity'
);
insert into events_retention default values;
