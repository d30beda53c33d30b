-- +goose Up
-- An endpoint's rate limit holds across every worker: each POST to a limited endpoint first takes a
-- place in the last second's sends here, under the endpoint's advisory lock. Unlogged: after a
-- database crash the log starts empty, which at worst lets one second's burst through.
CREATE UNLOGGED TABLE webhook_endpoint_sends (
    endpoint_id uuid NOT NULL,
    sent_at     timestamptz NOT NULL
);
CREATE INDEX webhook_endpoint_sends_recent ON webhook_endpoint_sends (endpoint_id, sent_at DESC);

-- +goose Down
DROP TABLE webhook_endpoint_sends;
