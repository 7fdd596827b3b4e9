-- A key made by a roll names the key it replaced (docs/design/dashboard.md), so the Keys page can say which
-- of two keys with one name replaced which. Null for created keys and for keys rolled before
-- this. No foreign key: api_keys is a reference table looked up by hash (docs/scaling.md), and
-- the name of a replaced key stays readable whatever becomes of that key.
alter table api_keys add column rolled_from text;
