-- Webhooks (docs/design/webhooks.md): a studio's endpoints, one delivery per endpoint and
-- event, every attempt (kept 30 days), and the dispatcher's fan-out cursor over the events of 00013.

-- At most 16 a studio (checked by the one module that creates them, under a lock on the studio).
-- The signing secret must stay usable for signing, so it is stored encrypted (AES-256-GCM, the
-- endpoint id as associated data: iv || ciphertext || tag) with the id of the key that encrypted it.
-- After a roll the previous secret signs too, until previous_secret_until.
create table webhook_endpoints (
  studio_id                  text not null references studios (id),
  id                         text not null,
  url                        text not null check (length(url) between 1 and 2048),
  event_types                text[] check (cardinality(event_types) between 1 and 64), -- null: every type
  enabled                    boolean not null default true,
  disabled_reason            text,
  -- events recorded from then on are delivered (creation, or the last re-enable)
  enabled_at                 timestamptz not null default now(),
  secret_ciphertext          bytea not null,
  secret_key_id              text not null,
  previous_secret_ciphertext bytea,
  previous_secret_key_id     text,
  previous_secret_until      timestamptz,
  -- the first failed attempt since the last success: failing for 3 days disables the endpoint
  failing_since              timestamptz,
  created_at                 timestamptz not null default now(),
  updated_at                 timestamptz not null default now(),
  primary key (studio_id, id),
  check (enabled = (disabled_reason is null)),
  check ((previous_secret_ciphertext is null) = (previous_secret_until is null))
);
-- the operator command line names an endpoint by its id alone
create index webhook_endpoints_id on webhook_endpoints (id);

-- One per endpoint and event (webhook-id = event_id). A test event is not in the feed: its body is in
-- payload. While an attempt is in flight, lease names the claim and next_attempt_at is the lease's end,
-- so the delivery of a dispatcher killed mid-attempt is due again then, and redone.
create table webhook_deliveries (
  studio_id       text not null,
  id              text not null,
  endpoint_id     text not null,
  event_id        text not null,
  event_type      text not null,
  payload         jsonb,
  status          text not null default 'pending' check (status in ('pending', 'succeeded', 'failed')),
  attempts        integer not null default 0,           -- every attempt made
  round_attempts  integer not null default 0,           -- since the last (re)queue: the retry schedule's position
  next_attempt_at timestamptz default now(),            -- while pending: when it is due (a new one at once)
  lease           text,
  created_at      timestamptz not null default now(),
  updated_at      timestamptz not null default now(),
  primary key (studio_id, id),
  unique (studio_id, endpoint_id, event_id),            -- a fan-out done twice delivers once
  foreign key (studio_id, endpoint_id) references webhook_endpoints (studio_id, id) on delete cascade,
  check ((status = 'pending') = (next_attempt_at is not null))
);
-- the dispatchers' claim: due pending deliveries, oldest due first
create index webhook_deliveries_due on webhook_deliveries (next_attempt_at) where status = 'pending';
-- the delivery log of an endpoint, newest first
create index webhook_deliveries_log on webhook_deliveries (studio_id, endpoint_id, created_at desc, id desc);
-- retention: finished deliveries older than 30 days
create index webhook_deliveries_finished on webhook_deliveries (updated_at) where status <> 'pending';

create table webhook_attempts (
  studio_id   text not null,
  delivery_id text not null,
  seq         bigint generated always as identity,
  at          timestamptz not null default now(),
  status_code integer,                                   -- null: no answer (timeout, refused, address not allowed)
  duration_ms integer not null,
  response    text check (octet_length(response) <= 1024), -- the first 1 KB of the answer
  error       text,
  primary key (studio_id, delivery_id, seq),
  foreign key (studio_id, delivery_id) references webhook_deliveries (studio_id, id) on delete cascade
);
-- retention: attempts older than 30 days, in batches
create index webhook_attempts_at on webhook_attempts (at);

-- How far the dispatchers have expanded the events into deliveries, in the feed's (xid, seq) order.
-- One row for the whole database (a reference table, docs/scaling.md): each fan-out locks it, expands
-- a batch and moves it, in one short transaction.
create table webhook_fanout_cursor (
  singleton boolean primary key default true check (singleton),
  last_xid  xid8 not null default '0',
  last_seq  bigint not null default 0
);
insert into webhook_fanout_cursor default values;
