-- Test mode (docs/design/test-mode.md): a sandbox is a studio of its own, linked to its live studio. Every record,
-- event, idempotency record, webhook endpoint and activity entry of a sandbox carries the sandbox's own studio id, so
-- the rules that keep studios apart keep it apart from its live studio too. A studio has at most five live
-- sandboxes (the service checks, under a lock on the live studio's row); a sandbox has no sandboxes of its own.
alter table studios
  add column live_studio_id text references studios (id),
  add column sandbox_name   text,
  add constraint studios_sandbox_named check ((live_studio_id is null) = (sandbox_name is null)),
  add constraint studios_sandbox_name_form check (sandbox_name ~ '^[a-z0-9][a-z0-9-]{0,39}$'),
  add constraint studios_sandbox_not_itself check (live_studio_id <> id);

create unique index studios_sandbox_names on studios (live_studio_id, sandbox_name) where deleted_at is null;

-- when the sandbox was last reset (its creation seeds it too); null for a live studio
alter table studios add column sandbox_reset_at timestamptz;
