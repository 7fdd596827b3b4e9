-- A key can be given an end (contract §2): rolling a key sets the old one's expires_at, and the
-- gateway refuses it from that instant (401 api_key_expired). Null: it never expires.
alter table api_keys add column expires_at timestamptz;
