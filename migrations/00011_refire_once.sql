-- +goose Up
-- A dropped delivery is re-fired at most once: a second request for the same row (a double click,
-- a retried call) answers the first one's chain instead of starting another. The re-fired chain's
-- own dropped row can be re-fired in turn.
ALTER TABLE webhook_dispatches ADD COLUMN refired_delivery_id uuid;
CREATE UNIQUE INDEX webhook_dispatches_refired_delivery ON webhook_dispatches (refired_delivery_id)
    WHERE refired_delivery_id IS NOT NULL;

-- +goose Down
DROP INDEX webhook_dispatches_refired_delivery;
ALTER TABLE webhook_dispatches DROP COLUMN refired_delivery_id;
