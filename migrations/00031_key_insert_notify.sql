-- +goose Up
-- Each `wds serve` also remembers, for a minute, the tokens that named no key (apikeys/cache.go), so
-- a flood of made-up keys costs the database one lookup for each new one. A key minted since must
-- work at once: its insert is announced too, with its key_hash, and every instance forgets the hash.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION wds_notify_key_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM pg_notify('wds_key_changes', encode(NEW.key_hash, 'hex'));
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND (to_jsonb(OLD) - 'last_used_at') = (to_jsonb(NEW) - 'last_used_at') THEN
        RETURN NULL;
    END IF;
    PERFORM pg_notify('wds_key_changes', encode(OLD.key_hash, 'hex'));
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER read_keys_notify_insert AFTER INSERT ON read_keys
    FOR EACH ROW EXECUTE FUNCTION wds_notify_key_change();
CREATE TRIGGER integration_keys_notify_insert AFTER INSERT ON integration_keys
    FOR EACH ROW EXECUTE FUNCTION wds_notify_key_change();

-- +goose Down
DROP TRIGGER integration_keys_notify_insert ON integration_keys;
DROP TRIGGER read_keys_notify_insert ON read_keys;
