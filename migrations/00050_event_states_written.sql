-- +goose Up
-- Release 2 of 3 of the state move (issue 52, migration 00049): an attempt, a queued re-fire and the
-- relay's mark write the event's state row alone. The event's own outcome, chain count and dispatch
-- time are no longer kept: no release that runs beside this one reads them (00049's reads only the
-- state rows). What the event's row still gets written is the previous release's relay marking it
-- dispatched: the copy carries that mark over (and created_at, which tests age events by), and the
-- state row's own trigger then finds the outcome of an event just dispatched, as the event's did.
-- The next release drops the copy and the event's columns.

-- wds_keep_event_outcomes is 00046's, on the state rows: it locks them in id order, as it locked the
-- events, and an attempt's row still marks its event dispatched in the same update.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION wds_keep_event_outcomes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids uuid[];
    -- An attempt's row was written or changed: its event's workflow was started. A queued re-fire or
    -- test (webhook_dispatches) is not: the event's own start may still be to come.
    attempted boolean := TG_TABLE_NAME = 'webhook_deliveries';
BEGIN
    SELECT array_agg(event_id ORDER BY event_id) INTO ids FROM (
        SELECT s.event_id FROM (SELECT DISTINCT event_id FROM changed) c JOIN event_states s ON s.event_id = c.event_id
        ORDER BY s.event_id FOR NO KEY UPDATE OF s) locked;
    IF ids IS NULL THEN
        RETURN NULL;
    END IF;
    UPDATE event_states s SET outcome = coalesce(o.outcome, wds_chainless_outcome(attempted OR s.dispatched_at IS NOT NULL)),
        chains_total = coalesce(o.chains_total, 0),
        dispatched_at = CASE WHEN attempted THEN coalesce(s.dispatched_at, clock_timestamp()) ELSE s.dispatched_at END
    FROM unnest(ids) x(id) LEFT JOIN wds_event_outcomes(ids) o ON o.event_id = x.id
    WHERE s.event_id = x.id AND ((attempted AND s.dispatched_at IS NULL) OR (s.outcome, s.chains_total) IS DISTINCT FROM
        (coalesce(o.outcome, wds_chainless_outcome(attempted OR s.dispatched_at IS NOT NULL)), coalesce(o.chains_total, 0)));
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- A state row marked dispatched by the relay (or by the copy of a previous release's mark) takes its
-- outcome then, as 00026's trigger did on the event: no chain yet is "no endpoints" until an attempt.
-- An attempt's own update sets the outcome itself, and is left alone.
-- +goose StatementBegin
CREATE FUNCTION wds_keep_dispatched_state() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT coalesce(max(o.outcome), wds_chainless_outcome(true)), coalesce(max(o.chains_total), 0)
        INTO NEW.outcome, NEW.chains_total FROM wds_event_outcomes(ARRAY[NEW.event_id]) o;
    RETURN NEW;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER event_states_outcome_dispatched BEFORE UPDATE OF dispatched_at ON event_states
    FOR EACH ROW WHEN (OLD.dispatched_at IS NULL AND NEW.dispatched_at IS NOT NULL
        AND NEW.outcome = OLD.outcome AND NEW.chains_total = OLD.chains_total)
    EXECUTE FUNCTION wds_keep_dispatched_state();

-- The copy carries only what another writer than this release's triggers can change on the event:
-- a previous release's relay mark, and created_at. A dispatch time once set is kept.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION wds_copy_event_state() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE event_states SET created_at = NEW.created_at, dispatched_at = coalesce(dispatched_at, NEW.dispatched_at)
    WHERE event_id = NEW.id AND (created_at, dispatched_at) IS DISTINCT FROM (NEW.created_at, coalesce(dispatched_at, NEW.dispatched_at));
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
DROP TRIGGER events_state_copied ON events;
CREATE TRIGGER events_state_copied AFTER UPDATE OF created_at, dispatched_at ON events
    FOR EACH ROW WHEN (OLD.created_at IS DISTINCT FROM NEW.created_at
        OR (OLD.dispatched_at IS NULL AND NEW.dispatched_at IS NOT NULL))
    EXECUTE FUNCTION wds_copy_event_state();

-- The event's outcome is no longer read: a mark of its row computes nothing there.
DROP TRIGGER events_outcome_dispatched ON events;

-- +goose Down
-- Back to 00049's release: the event's columns are kept again, from the state rows first.
CREATE TRIGGER events_outcome_dispatched BEFORE UPDATE OF dispatched_at ON events
    FOR EACH ROW WHEN (OLD.dispatched_at IS NULL AND NEW.dispatched_at IS NOT NULL
        AND NEW.outcome = OLD.outcome AND NEW.chains_total = OLD.chains_total)
    EXECUTE FUNCTION wds_keep_dispatched_outcome();
DROP TRIGGER events_state_copied ON events;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION wds_copy_event_state() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE event_states SET created_at = NEW.created_at, outcome = NEW.outcome, chains_total = NEW.chains_total,
        dispatched_at = coalesce(dispatched_at, NEW.dispatched_at)
    WHERE event_id = NEW.id;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
DROP TRIGGER event_states_outcome_dispatched ON event_states;
DROP FUNCTION wds_keep_dispatched_state();
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION wds_keep_event_outcomes() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    ids uuid[];
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
UPDATE events e SET outcome = s.outcome, chains_total = s.chains_total, dispatched_at = s.dispatched_at
FROM event_states s WHERE s.event_id = e.id
    AND (e.outcome, e.chains_total, e.dispatched_at) IS DISTINCT FROM (s.outcome, s.chains_total, s.dispatched_at);
CREATE TRIGGER events_state_copied AFTER UPDATE ON events
    FOR EACH ROW WHEN ((OLD.created_at, OLD.outcome, OLD.chains_total, OLD.dispatched_at) IS DISTINCT FROM
        (NEW.created_at, NEW.outcome, NEW.chains_total, NEW.dispatched_at))
    EXECUTE FUNCTION wds_copy_event_state();
