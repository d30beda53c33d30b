-- +goose Up
-- The worker prunes events and delivery rows older than WDS_RETENTION in batches, oldest first;
-- these indexes let each batch find its rows without scanning the tables.
CREATE INDEX webhook_deliveries_attempted ON webhook_deliveries (attempted_at);
CREATE INDEX events_created ON events (created_at);

-- +goose Down
DROP INDEX webhook_deliveries_attempted;
DROP INDEX events_created;
