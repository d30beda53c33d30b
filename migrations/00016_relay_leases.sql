-- +goose Up
-- The relay leases the rows it is about to start instead of holding their row locks while Temporal
-- answers: a short transaction claims them and sets the lease; another relay skips leased rows
-- until the lease ends (a relay that died mid-batch), and the mark of dispatched_at ends them.
ALTER TABLE events ADD COLUMN relay_lease_until timestamptz;
ALTER TABLE webhook_dispatches ADD COLUMN relay_lease_until timestamptz;

-- +goose Down
ALTER TABLE webhook_dispatches DROP COLUMN relay_lease_until;
ALTER TABLE events DROP COLUMN relay_lease_until;
