-- +goose Up
-- A recovery's batches continue from where the last one stopped (issue 39): the recovery keeps the
-- last chain it took, and the next batch walks the endpoint's dropped chains in time order from
-- there, so every batch costs the same whatever the recovery's size. Until now each batch walked
-- from the window's start past every chain already re-fired.
ALTER TABLE webhook_recoveries ADD COLUMN after_at timestamptz, ADD COLUMN after_id uuid;
CREATE INDEX webhook_deliveries_dropped ON webhook_deliveries (endpoint_id, attempted_at, id) WHERE status = 'dropped';

-- +goose Down
DROP INDEX webhook_deliveries_dropped;
ALTER TABLE webhook_recoveries DROP COLUMN after_id, DROP COLUMN after_at;
