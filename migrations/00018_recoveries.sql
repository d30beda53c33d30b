-- +goose Up
-- Recoveries: one per "re-fire every dropped chain of this endpoint in this window", run by one
-- Temporal workflow that starts the chains paced by the endpoint's rate limit. The progress lives
-- here, so a worker that restarts resumes where the last committed batch ended.
CREATE TABLE webhook_recoveries (
    id            uuid PRIMARY KEY,
    org_id        uuid NOT NULL REFERENCES orgs (id),
    endpoint_id   uuid NOT NULL REFERENCES webhook_endpoints (id),
    since         timestamptz NOT NULL,
    until         timestamptz NOT NULL CHECK (until > since),
    status        text NOT NULL DEFAULT 'running' CHECK (status IN ('running', 'completed', 'cancelled')),
    total         int NOT NULL,
    started       int NOT NULL DEFAULT 0,
    workflow_id   text NOT NULL UNIQUE,
    created_by    uuid REFERENCES users (id),
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    finished_at   timestamptz,
    -- set once the workflow is started; the relay starts what a crash left unstarted
    dispatched_at timestamptz
);
-- One running recovery per endpoint: the database settles two started at once.
CREATE UNIQUE INDEX webhook_recoveries_running ON webhook_recoveries (endpoint_id) WHERE status = 'running';
CREATE INDEX webhook_recoveries_undispatched ON webhook_recoveries (created_at) WHERE dispatched_at IS NULL;

-- The recovery a queued chain belongs to.
ALTER TABLE webhook_dispatches ADD COLUMN recovery_id uuid REFERENCES webhook_recoveries (id);

-- +goose Down
ALTER TABLE webhook_dispatches DROP COLUMN recovery_id;
DROP TABLE webhook_recoveries;
