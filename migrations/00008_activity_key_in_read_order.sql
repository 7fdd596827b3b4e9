-- The activity log's primary key becomes (studio_id, at, id): the order the dashboard reads
-- it in, so the index that repeated that order goes. Every call writes one entry, and each
-- B-tree on it is about a fifth of Postgres's work per entry (`bun run bench:activity-plan`
-- shows the list, keyset and request-id plans still as index scans). Still shardable:
-- studio_id leads the key. The dashboard's "older entries" cursor carries (at, id).
alter table activity drop constraint activity_pkey, add primary key (studio_id, at, id);
drop index activity_studio_at;
