-- +goose Up
-- A rotation may keep the previous signing secret for a grace period: until previous_secret_until
-- every delivery carries a v1= for the old secret beside the new one, so receivers can switch
-- without a window of failed verifications. Sealed like secret_sealed.
ALTER TABLE webhook_endpoints
    ADD COLUMN previous_secret_sealed bytea,
    ADD COLUMN previous_secret_until timestamptz;

-- +goose Down
ALTER TABLE webhook_endpoints DROP COLUMN previous_secret_sealed, DROP COLUMN previous_secret_until;
