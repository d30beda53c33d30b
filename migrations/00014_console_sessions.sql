-- +goose Up
-- Operator console sign-in sessions: the cookie holds a random id, the table only its SHA-256, so a
-- copy of the database signs nobody in. A session lasts 12 hours and works in one org at a time.
CREATE TABLE console_sessions (
    id_hash    bytea PRIMARY KEY,
    user_id    uuid NOT NULL REFERENCES users (id),
    org_id     uuid NOT NULL REFERENCES orgs (id),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX console_sessions_expiry ON console_sessions (expires_at);

-- +goose Down
DROP TABLE console_sessions;
