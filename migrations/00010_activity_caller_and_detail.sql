-- An activity entry's detail page shows who called and what went wrong (contract §11):
-- the caller's address, its user agent, and the problem's detail beside its code. Columns
-- without a default: adding them changes the catalog only, not one row of the log. Each
-- keeps at most 512 characters (the gateway's record step cuts longer ones).
set local lock_timeout = '10s';
alter table activity add column problem_detail text, add column client_address text, add column user_agent text;
