-- The activity log is append-only and written at request rate. Its foreign keys ran
-- a referential-integrity lookup into api_keys and studios for every row (about two
-- thirds of the insert cost) and protect nothing: keys are never deleted, only
-- revoked, studios only soft-deleted, and the gateway writes ids it just read.
alter table activity drop constraint activity_key_id_fkey;
alter table activity drop constraint activity_studio_id_fkey;
