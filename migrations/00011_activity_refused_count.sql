-- A flood of refused calls is folded (docs/design/hostile-callers.md): the 429s of one key, client address and
-- second become one entry, which says how many calls were refused in that second. Null on every
-- other entry. A column without a default: adding it changes the catalog only, not one row of the log.
set local lock_timeout = '10s';
alter table activity add column refused_count int;
