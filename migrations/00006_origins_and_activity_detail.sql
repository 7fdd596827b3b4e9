-- Publishable keys can be held to the websites that may use them (contract §2, §3):
-- exact origins (https://lotus.example) or one wildcard level of subdomains
-- (https://*.lotus.example). Null: any origin.
alter table api_keys add column allowed_origins text[];

-- An activity entry says why a call failed and where to find it (contract §11, §13):
-- the problem code of a refusal, the W3C trace id, and the query string.
alter table activity add column problem_code text, add column trace_id text, add column query text;

-- Search by request id (the id a developer copies from an error body), within a studio.
create index activity_studio_request on activity (studio_id, request_id);
