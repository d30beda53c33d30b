-- +goose Up
-- The Operator API lists an org's deliveries across all its endpoints, newest attempt first, with
-- optional filters; this index makes that an index range scan instead of a sort of the whole log.
CREATE INDEX webhook_deliveries_org_keyset ON webhook_deliveries (org_id, attempted_at DESC, id DESC);

-- +goose Down
DROP INDEX webhook_deliveries_org_keyset;
