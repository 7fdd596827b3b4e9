-- The dashboard's test mode (docs/design/dashboard.md): a session holds whether its pages show the live studio or
-- one of its sandboxes, and which sandbox it last picked (kept while it is in live mode, so switching back returns
-- to it). The session stays the live studio's: the dashboard reaches a sandbox only through it, a sandbox whose
-- live studio is the session's.
alter table dashboard_sessions
  add column test_mode  boolean not null default false,
  add column sandbox_id text references studios (id);
