-- Fan-out takes turns (docs/design/webhooks.md, "Fairness"): a tenant's events past its turn in one fan-out
-- transaction (FAN_OUT_TURN deliveries) are deferred like those past its pending budget, so a burst no longer holds
-- the cursor, and another studio's event behind it is expanded after one short transaction, not after the burst.
-- Why a studio's events wait ('budget': its tenant's backlog is at WEBHOOK_PENDING_BUDGET, what the dashboard and the
-- studio_webhook_deferred_studios gauge show; 'turn': its burst is expanded in turns with the others'), and when it
-- last had a turn: catch-up goes to the studio that waited longest for one.
alter table webhook_fanout_deferred
  add column reason text not null default 'budget' check (reason in ('budget', 'turn')),
  add column turn_at timestamptz;
