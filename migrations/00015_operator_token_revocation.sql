-- +goose Up
-- An operator token may be revoked: until it is rotated the user cannot authenticate (the Operator
-- API answers 401 invalid_token, as for an unknown token, and the console refuses to sign them in).
-- Rotating replaces token_hash and clears this column.
ALTER TABLE users ADD COLUMN token_revoked_at timestamptz;

-- +goose Down
ALTER TABLE users DROP COLUMN token_revoked_at;
