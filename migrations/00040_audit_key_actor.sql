-- +goose Up
-- An integration key acts on its own (the Integration API's cancel and refund, issue 51): its audit
-- rows name the key in actor_key_id, with actor_id null. A row has at most one actor; with neither,
-- the service acted by itself (docs/security.md, Audit).
--
-- Expand only: the previous release's binary inserts rows without the column (null: a person or the
-- service, as before) and reads the columns it names. Its console shows a key's rows as automatic,
-- until it is replaced. Both constraints are NOT VALID: every existing row has no key, and checking
-- them would hold the table's lock through a scan of its history.
ALTER TABLE audit_log ADD COLUMN actor_key_id uuid;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_actor_key FOREIGN KEY (actor_key_id) REFERENCES integration_keys (id) NOT VALID;
ALTER TABLE audit_log ADD CONSTRAINT audit_log_one_actor CHECK (actor_id IS NULL OR actor_key_id IS NULL) NOT VALID;

-- +goose Down
ALTER TABLE audit_log DROP COLUMN actor_key_id;
