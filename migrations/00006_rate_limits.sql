-- +goose Up
-- Integration keys' rate limits are shared by every instance, so their counts live here: one row
-- per key per second that saw an admitted request. UNLOGGED: the counts are worth nothing after a
-- crash (a restart merely forgives the last minute) and skipping the WAL halves the write cost.
-- last_at is the latest admission in the second, so a bucket stops counting exactly 60 seconds
-- after its last request: the window never holds more than the limit over any 60 seconds, and a
-- client refused at t that waits the 60 seconds Retry-After asks for finds its budget back.
CREATE UNLOGGED TABLE rate_limit_hits (
    key_id       uuid        NOT NULL,
    epoch_second bigint      NOT NULL,
    n            integer     NOT NULL,
    last_at      timestamptz NOT NULL,
    PRIMARY KEY (key_id, epoch_second)
);

-- wds_rate_limit_admit counts one request of key at now against limit and reports whether it was
-- admitted; a refused request is not counted. One call is one round trip. The advisory lock
-- serialises a key's callers: under READ COMMITTED each statement below takes a fresh snapshot, so
-- the sum sees every admission committed before the lock was granted and two requests at the
-- limit cannot both pass. The two-int lock space (class 1919706220, an arbitrary tag) is apart from
-- the bigint one other code locks in.
-- purge also deletes every key's buckets that no longer count; callers ask for it about once a
-- minute, which keeps the table at most two minutes of buckets per active key.
-- +goose StatementBegin
CREATE FUNCTION wds_rate_limit_admit(p_key uuid, p_now timestamptz, p_limit integer, p_purge boolean)
RETURNS boolean LANGUAGE plpgsql AS $$
DECLARE
    sec  bigint := floor(extract(epoch FROM p_now));
    used bigint;
BEGIN
    -- Before the lock: a purge waiting on other keys' rows then holds no lock anyone waits for.
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

-- +goose Down
DROP FUNCTION wds_rate_limit_admit(uuid, timestamptz, integer, boolean);
DROP TABLE rate_limit_hits;
