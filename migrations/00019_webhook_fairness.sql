-- Fair webhooks (docs/design/webhooks.md, "Fairness"): claims go round the studios with due deliveries, and within a
-- studio round its endpoints, instead of taking the oldest due deliveries of all studios first.

-- A claim walks the (studio, endpoint) pairs with pending deliveries (a loose index scan: one probe per pair, never
-- a read of the backlog), and takes each pair's oldest due deliveries from the same index. It replaces the index of
-- the single queue ordered by next_attempt_at.
create index webhook_deliveries_pending on webhook_deliveries (studio_id, endpoint_id, next_attempt_at)
  where status = 'pending';
drop index webhook_deliveries_due;

-- A studio's pending deliveries have a budget: once past it, the fan-out leaves that studio's events for later,
-- never dropping one. The row says where the studio's deferred events begin: its events after (after_xid, after_seq)
-- in the feed's order, up to the fan-out cursor, are not expanded yet. The fan-out skips the events of a studio with
-- a row, and expands them from here once its backlog is below the budget again; the row goes when it has caught up.
create table webhook_fanout_deferred (
  studio_id   text primary key references studios (id),
  after_xid   xid8 not null,
  after_seq   bigint not null,
  deferred_at timestamptz not null default now()
);
