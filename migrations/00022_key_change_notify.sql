-- +goose Up
-- Every `wds serve` keeps the keys it authenticated in memory (apikeys/cache.go) and listens on the
-- channel wds_key_changes: any change to a key row other than its last use (a revocation, a new
-- expiry, new scopes, a deletion) sends the row's key_hash, in hex, and each instance drops that
-- entry. NOTIFY is transactional, so the message leaves only when the change commits, and a change
-- made by hand in SQL is announced as one made by wds. last_used_at is written in batches every two
-- seconds and changes nothing a cache holds, so it is not announced.
-- +goose StatementBegin
CREATE FUNCTION wds_notify_key_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'UPDATE' AND (to_jsonb(OLD) - 'last_used_at') = (to_jsonb(NEW) - 'last_used_at') THEN
        RETURN NULL;
    END IF;
    PERFORM pg_notify('wds_key_changes', encode(OLD.key_hash, 'hex'));
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

CREATE TRIGGER read_keys_notify AFTER UPDATE OR DELETE ON read_keys
    FOR EACH ROW EXECUTE FUNCTION wds_notify_key_change();
CREATE TRIGGER integration_keys_notify AFTER UPDATE OR DELETE ON integration_keys
    FOR EACH ROW EXECUTE FUNCTION wds_notify_key_change();

-- +goose Down
DROP TRIGGER integration_keys_notify ON integration_keys;
DROP TRIGGER read_keys_notify ON read_keys;
DROP FUNCTION wds_notify_key_change();
