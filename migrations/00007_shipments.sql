-- +goose Up
-- Shipments of an order (docs/cli.md, Workspace operations): an order may have several; it is shipped once the first
-- leaves and delivered when all have arrived. fulfillment_status is kept on the order, written by the
-- same transaction that changes a shipment, so lists and events read it without a join.
ALTER TABLE orders ADD COLUMN fulfillment_status text NOT NULL DEFAULT 'unfulfilled'
    CHECK (fulfillment_status IN ('unfulfilled', 'shipped', 'delivered'));

CREATE TABLE shipments (
    id              uuid PRIMARY KEY,
    org_id          uuid NOT NULL REFERENCES orgs (id),
    order_id        uuid NOT NULL REFERENCES orders (id),
    carrier         text NOT NULL CHECK (carrier <> ''),
    tracking_number text CHECK (tracking_number <> ''),
    status          text NOT NULL DEFAULT 'shipped' CHECK (status IN ('shipped', 'delivered')),
    shipped_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    delivered_at    timestamptz,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    CHECK ((status = 'delivered') = (delivered_at IS NOT NULL))
);
CREATE INDEX shipments_order ON shipments (order_id, shipped_at, id);
CREATE TRIGGER shipments_touch BEFORE UPDATE ON shipments FOR EACH ROW EXECUTE FUNCTION wds_touch_updated_at();

-- +goose Down
DROP TABLE shipments;
ALTER TABLE orders DROP COLUMN fulfillment_status;
