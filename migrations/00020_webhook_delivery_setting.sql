-- WEBHOOK_ALLOW_PRIVATE_URLS as the processes that deliver webhooks run with it (docs/design/webhooks.md, "Where a
-- webhook may go"). Each management-service records its setting when its dispatcher starts; the dashboard and the
-- CLI read it here when they check a URL, so an endpoint is accepted where it will be delivered and refused where it
-- would not be, whatever their own environment says. No row: nothing has delivered yet, and each reads its own.
create table webhook_delivery_setting (
  singleton          boolean primary key default true check (singleton),
  allow_private_urls boolean not null,
  recorded_at        timestamptz not null default now()
);
