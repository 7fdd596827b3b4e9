-- Test events and replays, sent by hand (docs/design/webhooks.md): at most 10 at once to an endpoint, then 1 a
-- second, a token bucket kept in the endpoint's row so that every dashboard, the CLI and single-node mode count
-- together. Tokens as of manual_tokens_at; both null while none was ever taken (a full bucket).
alter table webhook_endpoints
  add column manual_tokens    double precision,
  add column manual_tokens_at timestamptz,
  add constraint webhook_endpoints_manual_tokens check ((manual_tokens is null) = (manual_tokens_at is null));
