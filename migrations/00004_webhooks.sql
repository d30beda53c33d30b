-- +goose Up
-- Outbound webhooks: endpoints, the delivery log (one row per attempt), and the queue of manual starts
-- (re-fires and test events) that the outbox relay turns into workflows.

CREATE TABLE webhook_endpoints (
    id            uuid PRIMARY KEY,
    org_id        uuid NOT NULL REFERENCES orgs (id),
    url           text NOT NULL CHECK (url LIKE 'https://%'),
    event_types   text[] NOT NULL CHECK (cardinality(event_types) > 0),
    secret_sealed bytea NOT NULL,
    enabled       boolean NOT NULL DEFAULT true,
    max_attempts  int NOT NULL DEFAULT 5 CHECK (max_attempts BETWEEN 1 AND 10),
    created_by    uuid NOT NULL REFERENCES users (id),
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    deleted_at    timestamptz
);
CREATE INDEX webhook_endpoints_org ON webhook_endpoints (org_id, created_at DESC, id DESC) WHERE deleted_at IS NULL;
CREATE TRIGGER webhook_endpoints_touch BEFORE UPDATE ON webhook_endpoints FOR EACH ROW EXECUTE FUNCTION wds_touch_updated_at();

-- One row per attempt. The id is made by the workflow before the attempt, so a retried activity task
-- upserts the same row instead of adding one. A chain is one retry ladder (event x endpoint, or one
-- re-fire); next_attempt_at is set while the chain still has an attempt to come.
CREATE TABLE webhook_deliveries (
    id               uuid PRIMARY KEY,
    org_id           uuid NOT NULL REFERENCES orgs (id),
    event_id         uuid NOT NULL REFERENCES events (id),
    endpoint_id      uuid NOT NULL REFERENCES webhook_endpoints (id),
    event_type       text NOT NULL,
    chain_id         uuid NOT NULL,
    workflow_id      text NOT NULL,
    attempt          int NOT NULL CHECK (attempt BETWEEN 1 AND 10),
    status           text NOT NULL CHECK (status IN ('succeeded', 'failed', 'dropped')),
    response_status  int,
    response_excerpt text NOT NULL DEFAULT '',
    error            text NOT NULL DEFAULT '',
    duration_ms      bigint NOT NULL DEFAULT 0,
    attempted_at     timestamptz NOT NULL,
    next_attempt_at  timestamptz,
    UNIQUE (chain_id, attempt)
);
-- list_deliveries pages by (attempted_at DESC, id DESC) per endpoint.
CREATE INDEX webhook_deliveries_keyset ON webhook_deliveries (endpoint_id, attempted_at DESC, id DESC);
-- Disabling an endpoint drops its pending chains in the same transaction.
CREATE INDEX webhook_deliveries_pending ON webhook_deliveries (endpoint_id) WHERE next_attempt_at IS NOT NULL;

-- Re-fires and test events wait here until a workflow is started for them, exactly like events wait in
-- the outbox: the operator's command commits, and the API (at once) or the relay (later) starts it.
CREATE TABLE webhook_dispatches (
    id            uuid PRIMARY KEY,
    org_id        uuid NOT NULL REFERENCES orgs (id),
    kind          text NOT NULL CHECK (kind IN ('refire', 'test')),
    workflow_id   text NOT NULL UNIQUE,
    event_id      uuid NOT NULL REFERENCES events (id),
    endpoint_id   uuid NOT NULL REFERENCES webhook_endpoints (id),
    chain_id      uuid NOT NULL,
    delivery_id   uuid,
    created_by    uuid REFERENCES users (id),
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    dispatched_at timestamptz
);
CREATE INDEX webhook_dispatches_undispatched ON webhook_dispatches (created_at, id) WHERE dispatched_at IS NULL;

-- The <n> of webhook-refire/<event_id>/<endpoint_id>/<n>: an upsert increments it atomically.
CREATE TABLE webhook_refire_counters (
    event_id    uuid NOT NULL REFERENCES events (id),
    endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id),
    n           int NOT NULL,
    PRIMARY KEY (event_id, endpoint_id)
);

-- +goose Down
DROP TABLE webhook_refire_counters, webhook_dispatches, webhook_deliveries, webhook_endpoints;
