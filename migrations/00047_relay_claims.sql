-- +goose Up
-- A relay's claim of the rows it is about to start, one row a batch (issue 52), instead of a lease
-- written on each claimed row (relay_lease_until, migration 00016). Writing the lease rewrote each
-- event's row (1.5 kB, on pages it fills) into a new version with an entry in every one of the events'
-- ten indexes, once a delivery. The claim and its row are one statement; the relay's mark after the
-- starts deletes it; one whose relay died runs out after `until` and is deleted by the next claim.
-- Other relays skip the rows an unexpired claim names as they skipped leased rows. The
-- relay_lease_until columns stay, and are still honoured, while a previous release's relay may
-- write them; a later release drops them.
CREATE TABLE relay_claims (
    id      uuid PRIMARY KEY,
    source  text NOT NULL CHECK (source IN ('events', 'webhook_dispatches')),
    row_ids uuid[] NOT NULL,
    until   timestamptz NOT NULL
);

-- wds_relay_claimed says whether an unexpired claim names the row. A claim statement asks it of each
-- row it has locked: VOLATILE, so it reads with a snapshot of its own, taken after the lock. A claim
-- committed by another relay between this statement's start and the lock, which the statement's own
-- snapshot does not see, is seen here (its relay held the row's lock until it committed), and the
-- row is left to it: two relays never start the same row, as when the lease rewrote the row.
-- +goose StatementBegin
CREATE FUNCTION wds_relay_claimed(p_source text, p_id uuid) RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    RETURN EXISTS (SELECT 1 FROM relay_claims c WHERE c.source = p_source AND c.until >= clock_timestamp() AND p_id = ANY (c.row_ids));
END;
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION wds_relay_claimed(text, uuid);
DROP TABLE relay_claims;
