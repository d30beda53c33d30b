-- +goose Up
-- The headers each attempt's POST carried (issue 51), recorded with the attempt so support reads
-- what was sent rather than a reconstruction: the signature and timestamp are the attempt's own, and
-- the endpoint's custom headers may have changed since. One jsonb column, written by the insert the
-- attempt already makes, with no index: {"standard": {name: value} (wds's own headers),
-- "custom": {name: ""} (the endpoint's custom header names), "sealed": base64 (the custom set as
-- sent, sealed under WDS_ENCRYPTION_KEY like the endpoint's)}. Null for an attempt that sent
-- nothing and for attempts recorded before this column.
ALTER TABLE webhook_deliveries ADD COLUMN request_headers jsonb;

-- +goose Down
ALTER TABLE webhook_deliveries DROP COLUMN request_headers;
