-- The activity log's identity column hands its ids to each writing connection 100 at a time, not one by one.
-- Every entry took `nextval` on the sequence's page: a buffer lock, and a WAL record every 32 values. Under the
-- gateway's COPYs on the bench stack, the writer's backend spent a median 5.8 µs of CPU an entry with the cache
-- against 8.7 without, lower in each of 8 alternated rounds (docs/benchmarks.md). An id only breaks ties between
-- entries of one key in one millisecond (the log's key is (studio_id, key_id, at, id)). Across connections ids are
-- no longer in the order rows were written, and the ids a connection has not used when it closes are skipped.
set local lock_timeout = '10s';
alter table activity alter column id set cache 100;
