-- +goose Up
-- The support desk (docs/support.md): endpoint rate limits, custom headers, why an endpoint is
-- disabled and when its health was last reset; the kinds of chain an operator can start; and the
-- columns and indexes that find an order's events among millions.

ALTER TABLE webhook_endpoints
    ADD COLUMN rate_limit int CHECK (rate_limit BETWEEN 1 AND 1000),
    ADD COLUMN headers jsonb NOT NULL DEFAULT '{}' CHECK (jsonb_typeof(headers) = 'object'),
    ADD COLUMN disabled_reason text CHECK (disabled_reason IN ('manual', 'failing')),
    -- Enabling an endpoint starts its health afresh: failures before it no longer count.
    ADD COLUMN health_reset_at timestamptz;
UPDATE webhook_endpoints SET disabled_reason = 'manual' WHERE NOT enabled AND deleted_at IS NULL;

-- Resends and recoveries are queued starts like re-fires and tests.
ALTER TABLE webhook_dispatches DROP CONSTRAINT webhook_dispatches_kind_check;
ALTER TABLE webhook_dispatches ADD CONSTRAINT webhook_dispatches_kind_check
    CHECK (kind IN ('refire', 'test', 'resend', 'recovery'));
-- An event's detail names each chain's kind by its chain id.
CREATE INDEX webhook_dispatches_event ON webhook_dispatches (event_id);
-- An event's detail and outcome read its chains.
CREATE INDEX webhook_deliveries_event ON webhook_deliveries (event_id, attempted_at, id);

-- The order and the resource an event is about, read from its body: an order event's data is the
-- order, a payment event's {payment, order}, a shipment event's {order, shipment}; the resource of the
-- others is their data. Generated, so every writer fills them and old rows are filled here.
-- +goose StatementBegin
CREATE FUNCTION wds_uuid_or_null(t text) RETURNS uuid LANGUAGE sql IMMUTABLE PARALLEL SAFE AS $$
    SELECT CASE WHEN t ~* '^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$' THEN t::uuid END
$$;
-- +goose StatementEnd
ALTER TABLE events
    ADD COLUMN order_id uuid GENERATED ALWAYS AS (wds_uuid_or_null(CASE
        WHEN type IN ('order.created', 'order.cancelled') THEN body -> 'data' ->> 'id'
        WHEN type IN ('order.shipped', 'order.delivered', 'shipment.tracking_added', 'payment.recorded', 'payment.refunded')
            THEN body -> 'data' -> 'order' ->> 'id'
    END)) STORED,
    ADD COLUMN resource_id uuid GENERATED ALWAYS AS (wds_uuid_or_null(CASE
        WHEN type IN ('order.shipped', 'order.delivered', 'shipment.tracking_added') THEN body -> 'data' -> 'shipment' ->> 'id'
        WHEN type IN ('payment.recorded', 'payment.refunded') THEN body -> 'data' -> 'payment' ->> 'id'
        ELSE body -> 'data' ->> 'id'
    END)) STORED;
CREATE INDEX events_org_order ON events (org_id, order_id, created_at DESC, id DESC) WHERE order_id IS NOT NULL;
CREATE INDEX events_org_resource ON events (org_id, resource_id, created_at DESC, id DESC) WHERE resource_id IS NOT NULL;
CREATE INDEX events_org_type ON events (org_id, type, created_at DESC, id DESC);

-- +goose Down
DROP INDEX events_org_type, events_org_resource, events_org_order;
ALTER TABLE events DROP COLUMN resource_id, DROP COLUMN order_id;
DROP FUNCTION wds_uuid_or_null(text);
DROP INDEX webhook_deliveries_event, webhook_dispatches_event;
ALTER TABLE webhook_dispatches DROP CONSTRAINT webhook_dispatches_kind_check;
ALTER TABLE webhook_dispatches ADD CONSTRAINT webhook_dispatches_kind_check CHECK (kind IN ('refire', 'test'));
ALTER TABLE webhook_endpoints DROP COLUMN health_reset_at, DROP COLUMN disabled_reason, DROP COLUMN headers, DROP COLUMN rate_limit;
