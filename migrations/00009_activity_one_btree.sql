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
-- The gateway has only ever recorded calls whose key resolved, so every entry it wrote
-- has a key_id. A row without one was written by hand, no page could show it, and it
-- would stop the key from being built.
delete from activity where key_id is null;
alter table activity drop constraint activity_pkey, add primary key (studio_id, key_id, at, id);
drop index activity_studio_key_at;
drop index activity_studio_request;
create index activity_studio_request_before_00009 on activity (studio_id, request_id) where length(request_id) < 26;
