-- Which events an endpoint receives (docs/design/webhooks.md): those committed after it was created or last
-- re-enabled. `enabled_at` could not say it: an event's created_at is its transaction's start, so a write begun
-- just before the endpoint was made and committed just after fell outside both. The snapshot taken when the
-- endpoint was enabled says it exactly: an event it does not see (in flight then, or later) is delivered.
-- Rows made before this migration keep null and the time comparison.
alter table webhook_endpoints add column enabled_snapshot pg_snapshot;
alter table webhook_endpoints alter column enabled_snapshot set default pg_current_snapshot();
