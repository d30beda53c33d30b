-- +goose Up
-- An event's state, what changes after it is written (its outcome, its chain count and when it was
-- dispatched), gets a narrow row of its own (issue 52). Keeping it on the event's row rewrote that
-- row once a delivery: 1.5 kB on pages it fills, so never a HOT update, with an entry in every one
-- of the events' ten indexes, about half of what PostgreSQL spent on an attempt. Here the rewrite is
-- a row of about 80 bytes with three indexes.
--
-- It moves over three releases, because the release before reads events.outcome and
-- events.dispatched_at beside this one and after a rollback. This one keeps both in step (the event's
-- row is still written, and copied here in the same statement) and reads only this table; the next
-- stops writing the event's columns; the one after drops the copy, once no release that marks the
-- event's row runs. Until the next, the copy is the only writer of event_states, so it agrees with
-- the event's row (but for a dispatch time moved once set, which wds never does).
CREATE TABLE event_states (
    event_id      uuid PRIMARY KEY,
    org_id        uuid NOT NULL,
    created_at    timestamptz NOT NULL,
    -- listed is false for webhook tests, which the support desk's search leaves out unless asked
    -- for by type: the outcome index holds only listed events, as events_org_outcome does.
    listed        boolean NOT NULL,
    outcome       text NOT NULL,
    chains_total  integer NOT NULL,
    dispatched_at timestamptz
);

-- wds_add_event_states writes the state rows of the events a statement inserted, as the insert's
-- triggers left them (an event written dispatched already has its outcome).
-- +goose StatementBegin
CREATE FUNCTION wds_add_event_states() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO event_states (event_id, org_id, created_at, listed, outcome, chains_total, dispatched_at)
    SELECT a.id, a.org_id, a.created_at, a.type <> 'webhook.test', a.outcome, a.chains_total, a.dispatched_at
    FROM added a;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- wds_copy_event_state copies a change of the event's state columns, whoever made it: this
-- release's triggers, or a relay marking the event dispatched. A dispatch time, once set, is kept
-- (as on the event's row): a relay of this release marking the event's row after the next release
-- marked the state row alone must not move it. created_at is never changed by wds, but a copy that
-- follows it too cannot drift from the event (tests age events by it).
-- +goose StatementBegin
CREATE FUNCTION wds_copy_event_state() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE event_states SET created_at = NEW.created_at, outcome = NEW.outcome, chains_total = NEW.chains_total,
        dispatched_at = coalesce(dispatched_at, NEW.dispatched_at)
    WHERE event_id = NEW.id;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- The backfill and the triggers are one transaction, and CREATE TRIGGER locks out writes to events
-- until it commits: no event is written between the copy and the trigger that keeps it. The copy
-- follows any update that changes the columns, not only those naming them in SET: a BEFORE trigger
-- may change them too.
CREATE TRIGGER events_state_added AFTER INSERT ON events
    REFERENCING NEW TABLE AS added FOR EACH STATEMENT EXECUTE FUNCTION wds_add_event_states();
CREATE TRIGGER events_state_copied AFTER UPDATE ON events
    FOR EACH ROW WHEN ((OLD.created_at, OLD.outcome, OLD.chains_total, OLD.dispatched_at) IS DISTINCT FROM
        (NEW.created_at, NEW.outcome, NEW.chains_total, NEW.dispatched_at))
    EXECUTE FUNCTION wds_copy_event_state();

INSERT INTO event_states (event_id, org_id, created_at, listed, outcome, chains_total, dispatched_at)
SELECT id, org_id, created_at, type <> 'webhook.test', outcome, chains_total, dispatched_at FROM events;

-- A state row goes with its event. The key is added after the copy, which it then checks in one
-- pass instead of row by row.
ALTER TABLE event_states ADD CONSTRAINT event_states_event_id_fkey
    FOREIGN KEY (event_id) REFERENCES events (id) ON DELETE CASCADE;

-- The support desk's search by outcome (as events_org_outcome) and the relay's queue (as
-- events_undispatched).
CREATE INDEX event_states_org_outcome ON event_states (org_id, outcome DESC, created_at DESC, event_id DESC) WHERE listed;
CREATE INDEX event_states_undispatched ON event_states (created_at, event_id) WHERE dispatched_at IS NULL;

-- +goose Down
DROP TRIGGER events_state_copied ON events;
DROP TRIGGER events_state_added ON events;
DROP FUNCTION wds_copy_event_state();
DROP FUNCTION wds_add_event_states();
DROP TABLE event_states;
