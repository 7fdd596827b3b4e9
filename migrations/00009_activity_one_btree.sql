-- migrate: no transaction
-- The activity log keeps one B-tree instead of three. Every call writes an entry, and
-- Postgres's work per entry was the heap (about 3 µs), its key (about 2 µs) and two more
-- B-trees (about 2.5 µs each): `(studio_id, key_id, at, id)` for the key filter and
-- `(studio_id, request_id)` for the request-id search. Now:
--   * the key is `(studio_id, key_id, at, id)`: the key filter reads it directly, and the
--     unfiltered page reads the newest entries of each of the studio's keys (a studio has a
--     handful) and merges them;
--   * a request id carries the time its request arrived, which is the entry's `at`, so
--     the search reads the key at that millisecond for each key;
--   * request ids made before they carried the time (shorter than 26 characters) keep a
--     partial index, which no new entry enters; they age out with retention (90 days).
-- Still shardable: studio_id leads every index.
--
-- The gateways keep writing while this runs: indexes are built and dropped concurrently,
-- and the locks that stop writes are each held for a moment (adding a constraint not yet
-- validated, the NOT NULL that a validated constraint proves, swapping the key to its
-- built index). A lock that cannot be had within 10 s fails the run rather than queue
-- every write behind it; run it again, each statement may run twice.
set lock_timeout = '10s';
-- a build an earlier run left unfinished (once the swap is done, this name is gone)
drop index concurrently if exists activity_key;
-- The gateway has only ever recorded calls whose key resolved, so every entry it wrote
-- has a key_id. A row without one was written by hand, and no page could show it.
delete from activity where key_id is null;
create unique index concurrently activity_key on activity (studio_id, key_id, at, id);
create index concurrently if not exists activity_studio_request_before_00009 on activity (studio_id, request_id) where length(request_id) < 26;
alter table activity drop constraint if exists activity_key_id_present;
alter table activity add constraint activity_key_id_present check (key_id is not null) not valid;
alter table activity validate constraint activity_key_id_present;
alter table activity alter column key_id set not null;
alter table activity drop constraint activity_pkey, add constraint activity_pkey primary key using index activity_key, drop constraint activity_key_id_present;
drop index concurrently if exists activity_studio_key_at;
drop index concurrently if exists activity_studio_request;
reset lock_timeout;
