-- +goose Up
-- A recovery's chains, by recovery (issue 51): its page and GET /admin/v1/recoveries/{id} say how
-- they stand now (succeeded, retrying, dropped again), reading that recovery's chains alone.
CREATE INDEX webhook_dispatches_recovery ON webhook_dispatches (recovery_id, created_at) WHERE recovery_id IS NOT NULL;

-- +goose Down
DROP INDEX webhook_dispatches_recovery;
