-- +goose Up
-- Suppliers gain contact fields and the claim-token flow (docs/cli.md, Workspace operations): an owner or admin issues a
-- single-use token for a vendor, and the supplier claims its profile with it. Only the token's SHA-256
-- is stored; a new token replaces the vendor's previous one (one row per vendor).
ALTER TABLE vendors
    ADD COLUMN phone text,
    ADD COLUMN notes text,
    ADD COLUMN claimed_at timestamptz,
    ADD COLUMN claimed_by_email text;

CREATE TABLE vendor_claim_tokens (
    vendor_id  uuid PRIMARY KEY REFERENCES vendors (id),
    token_hash bytea NOT NULL UNIQUE,
    expires_at timestamptz NOT NULL,
    used_at    timestamptz,
    created_by uuid NOT NULL REFERENCES users (id),
    created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- +goose Down
DROP TABLE vendor_claim_tokens;
ALTER TABLE vendors DROP COLUMN phone, DROP COLUMN notes, DROP COLUMN claimed_at, DROP COLUMN claimed_by_email;
