-- +goose Up
-- An instance takes a slice of a key's budget at a time (a lease, ratelimit/lease.go) instead of
-- asking for every request. A lease of n granted at now for use until p_until is recorded in the
-- bucket of p_until's second with last_at p_until: the latest moment a request could spend it.
-- Whatever 60 seconds the requests it admits fall in, the lease counted against every other lease
-- granted in them, so no 60-second span of requests exceeds the limit across instances. What an
-- instance did not spend it gives back (p_back, from the lease that ended at p_back_until), which
-- frees it for the others at once. wds_rate_limit_admit, one request spent at once, is a lease of
-- one until now.
-- +goose StatementBegin
CREATE FUNCTION wds_rate_limit_lease(p_key uuid, p_now timestamptz, p_until timestamptz, p_limit integer,
    p_want integer, p_back integer, p_back_until timestamptz, p_purge boolean)
RETURNS integer LANGUAGE plpgsql AS $$
DECLARE
    used    bigint;
    granted integer;
BEGIN
    -- Before the lock: a purge waiting on other keys' rows then holds no lock anyone waits for.
    IF p_purge THEN
        DELETE FROM rate_limit_hits WHERE last_at <= p_now - interval '60 seconds';
    END IF;
    PERFORM pg_advisory_xact_lock(1919706220, hashtext(p_key::text));
    IF p_back > 0 THEN
        UPDATE rate_limit_hits SET n = greatest(n - p_back, 0)
         WHERE key_id = p_key AND epoch_second = floor(extract(epoch FROM p_back_until));
    END IF;
    IF p_want <= 0 THEN
        RETURN 0;
    END IF;
    SELECT coalesce(sum(h.n), 0) INTO used FROM rate_limit_hits h
     WHERE h.key_id = p_key AND h.epoch_second >= floor(extract(epoch FROM p_now)) - 60
       AND h.last_at > p_now - interval '60 seconds';
    granted := least(p_want, greatest(p_limit - used, 0));
    IF granted = 0 THEN
        RETURN 0;
    END IF;
    INSERT INTO rate_limit_hits AS h (key_id, epoch_second, n, last_at)
    VALUES (p_key, floor(extract(epoch FROM p_until)), granted, p_until)
    ON CONFLICT (key_id, epoch_second) DO UPDATE SET n = h.n + excluded.n, last_at = greatest(h.last_at, excluded.last_at);
    RETURN granted;
END;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION wds_rate_limit_admit(p_key uuid, p_now timestamptz, p_limit integer, p_purge boolean)
RETURNS boolean LANGUAGE sql AS $$
    SELECT wds_rate_limit_lease(p_key, p_now, p_now, p_limit, 1, 0, NULL, p_purge) = 1;
$$;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION wds_rate_limit_admit(p_key uuid, p_now timestamptz, p_limit integer, p_purge boolean)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    sec  bigint := floor(extract(epoch FROM p_now));
    used bigint;
BEGIN
    IF p_purge THEN
        DELETE FROM rate_limit_hits WHERE last_at <= p_now - interval '60 seconds';
    END IF;
    PERFORM pg_advisory_xact_lock(1919706220, hashtext(p_key::text));
    SELECT coalesce(sum(h.n), 0) INTO used FROM rate_limit_hits h
     WHERE h.key_id = p_key AND h.epoch_second >= sec - 60 AND h.last_at > p_now - interval '60 seconds';
    IF used >= p_limit THEN
        RETURN false;
    END IF;
    INSERT INTO rate_limit_hits AS h (key_id, epoch_second, n, last_at) VALUES (p_key, sec, 1, p_now)
    ON CONFLICT (key_id, epoch_second) DO UPDATE SET n = h.n + 1, last_at = greatest(h.last_at, excluded.last_at);
    RETURN true;
END;
$$;
-- +goose StatementEnd
DROP FUNCTION wds_rate_limit_lease(uuid, timestamptz, timestamptz, integer, integer, integer, timestamptz, boolean);
