-- +goose Up
-- An endpoint's custom header values may be credentials (an Authorization token), so they are sealed
-- at rest like signing secrets (WDS_ENCRYPTION_KEY): headers_sealed holds the whole set sealed, and
-- headers keeps the names with blank values, which is all a member is shown. A row written before
-- this has headers_sealed NULL and its values in headers; readers take either, and
-- `wds admin secrets reencrypt` seals such rows.
ALTER TABLE webhook_endpoints ADD COLUMN headers_sealed bytea;

-- +goose Down
ALTER TABLE webhook_endpoints DROP COLUMN headers_sealed;
