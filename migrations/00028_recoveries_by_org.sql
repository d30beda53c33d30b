-- +goose Up
-- An org's running recoveries share one budget of chains a second (WDS_RECOVERY_RATE, issue 39):
-- each batch counts its org's running recoveries, which this index finds without reading another
-- org's.
CREATE INDEX webhook_recoveries_org_running ON webhook_recoveries (org_id) WHERE status = 'running';

-- +goose Down
DROP INDEX webhook_recoveries_org_running;
