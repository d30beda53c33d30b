-- +goose Up
-- An endpoint registered by `wds listen` holds a lease its listener renews while it runs. A listener
-- that crashed stops renewing: once the lease ends the endpoint no longer counts against the org's
-- ten enabled endpoints, and the worker's prune deletes it. NULL: an ordinary endpoint, no lease.
ALTER TABLE webhook_endpoints ADD COLUMN lease_until timestamptz;
CREATE INDEX webhook_endpoints_lease ON webhook_endpoints (lease_until) WHERE lease_until IS NOT NULL AND deleted_at IS NULL;

-- +goose Down
DROP INDEX webhook_endpoints_lease;
ALTER TABLE webhook_endpoints DROP COLUMN lease_until;
