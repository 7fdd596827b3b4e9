-- New activity rows carry the newest time of their studio (and key). In a descending
-- index each lands at the start of its range, splitting pages in the middle; in an
-- ascending one it lands at the end, where Postgres appends cheaply (about a third of
-- the per-row cost of COPY here). The dashboard's newest-first pages read the same
-- index backwards.
drop index activity_studio_at;
drop index activity_studio_key_at;
create index activity_studio_at on activity (studio_id, at, id);
create index activity_studio_key_at on activity (studio_id, key_id, at, id);
