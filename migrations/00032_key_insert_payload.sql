-- +goose Up
-- A new key's announcement says it is one ("new:" and its key_hash): an instance forgets only that no
-- key had the hash, and keeps the key itself when a request already cached it, instead of dropping
-- it as a changed key (one more lookup, and a cache that missed right after a mint). An instance of
-- the previous release takes the payload for a hash no key has, so until it is replaced a key minted
-- after its token was refused there is refused from its memory for up to a minute.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION wds_notify_key_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        PERFORM pg_notify('wds_key_changes', 'new:' || encode(NEW.key_hash, 'hex'));
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

-- +goose Down
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
