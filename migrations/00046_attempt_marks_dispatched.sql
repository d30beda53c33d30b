-- +goose Up
-- An event's first attempt marks it dispatched (issue 52). An attempt's row means a workflow was
-- started for its event, and the outcome trigger already rewrites the event's row as the attempt
-- is recorded (its outcome and chain count change): setting dispatched_at in that same update
-- costs nothing more, and the starter's mark after its start then finds the event marked and writes
-- nothing. Without it an event's row was rewritten twice, the mark and the outcome, each a new
-- version with an entry in every one of the events' indexes, since both columns are indexed.
-- dispatched_at is not cleared or moved: an event marked by its starter first keeps that time.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION wds_keep_event_outcomes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids uuid[];
    -- An attempt's row was written or changed: its event's workflow was started. A queued re-fire or
    -- test (webhook_dispatches) is not: the event's own start may still be to come.
    attempted boolean := TG_TABLE_NAME = 'webhook_deliveries';
BEGIN
    SELECT array_agg(id ORDER BY id) INTO ids FROM (
        SELECT e.id FROM (SELECT DISTINCT event_id FROM changed) c JOIN events e ON e.id = c.event_id
        ORDER BY e.id FOR NO KEY UPDATE OF e) locked;
    IF ids IS NULL THEN
        RETURN NULL;
    END IF;
    UPDATE events e SET outcome = coalesce(o.outcome, wds_chainless_outcome(attempted OR e.dispatched_at IS NOT NULL)),
        chains_total = coalesce(o.chains_total, 0),
        dispatched_at = CASE WHEN attempted THEN coalesce(e.dispatched_at, clock_timestamp()) ELSE e.dispatched_at END
    FROM unnest(ids) x(id) LEFT JOIN wds_event_outcomes(ids) o ON o.event_id = x.id
    WHERE e.id = x.id AND ((attempted AND e.dispatched_at IS NULL) OR (e.outcome, e.chains_total) IS DISTINCT FROM
        (coalesce(o.outcome, wds_chainless_outcome(attempted OR e.dispatched_at IS NOT NULL)), coalesce(o.chains_total, 0)));
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- The dispatched_at trigger's own outcome is the one the update above just set: it reads the same
-- chains. It is left to the starter's mark, which sets nothing else.
DROP TRIGGER events_outcome_dispatched ON events;
CREATE TRIGGER events_outcome_dispatched BEFORE UPDATE OF dispatched_at ON events
    FOR EACH ROW WHEN (OLD.dispatched_at IS NULL AND NEW.dispatched_at IS NOT NULL
        AND NEW.outcome = OLD.outcome AND NEW.chains_total = OLD.chains_total)
    EXECUTE FUNCTION wds_keep_dispatched_outcome();

-- +goose Down
DROP TRIGGER events_outcome_dispatched ON events;
CREATE TRIGGER events_outcome_dispatched BEFORE UPDATE OF dispatched_at ON events
    FOR EACH ROW WHEN (OLD.dispatched_at IS NULL AND NEW.dispatched_at IS NOT NULL)
    EXECUTE FUNCTION wds_keep_dispatched_outcome();
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION wds_keep_event_outcomes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids uuid[];
BEGIN
    SELECT array_agg(id ORDER BY id) INTO ids FROM (
        SELECT e.id FROM (SELECT DISTINCT event_id FROM changed) c JOIN events e ON e.id = c.event_id
        ORDER BY e.id FOR NO KEY UPDATE OF e) locked;
    IF ids IS NULL THEN
        RETURN NULL;
    END IF;
    UPDATE events e SET outcome = coalesce(o.outcome, wds_chainless_outcome(e.dispatched_at IS NOT NULL)),
        chains_total = coalesce(o.chains_total, 0)
    FROM unnest(ids) x(id) LEFT JOIN wds_event_outcomes(ids) o ON o.event_id = x.id
    WHERE e.id = x.id AND (e.outcome, e.chains_total) IS DISTINCT FROM
        (coalesce(o.outcome, wds_chainless_outcome(e.dispatched_at IS NOT NULL)), coalesce(o.chains_total, 0));
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
