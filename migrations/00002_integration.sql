-- +goose Up
-- Integration keys, the two idempotency layers, and the outbox that feeds webhook delivery.

CREATE TABLE integration_keys (
    id                    uuid PRIMARY KEY,
    org_id                uuid NOT NULL REFERENCES orgs (id),
    store_id              uuid NOT NULL,
    label                 text NOT NULL DEFAULT '',
    key_hash              bytea NOT NULL UNIQUE,
    key_hint              text NOT NULL,
    payload_format        text NOT NULL DEFAULT 'generic' CHECK (payload_format IN ('generic', 'nativestore')),
    scopes                text[] NOT NULL DEFAULT '{}',
    ip_allowlist          cidr[] NOT NULL DEFAULT '{}',
    require_signature     boolean NOT NULL DEFAULT false,
    signing_secret_sealed bytea,
    rate_limit            int NOT NULL DEFAULT 600 CHECK (rate_limit BETWEEN 1 AND 6000),
    created_by            uuid NOT NULL REFERENCES users (id),
    created_at            timestamptz NOT NULL DEFAULT now(),
    expires_at            timestamptz,
    revoked_at            timestamptz,
    last_used_at          timestamptz,
    FOREIGN KEY (org_id, store_id) REFERENCES stores (org_id, id),
    CHECK (payload_format <> 'nativestore' OR require_signature)
);
CREATE INDEX integration_keys_org ON integration_keys (org_id, created_at DESC, id DESC);

-- Permanent external_id dedupe: the primary key is the final word when fifty creates race.
CREATE TABLE external_refs (
    integration_key_id uuid NOT NULL REFERENCES integration_keys (id),
    entity_type        text NOT NULL CHECK (entity_type IN ('order', 'payment', 'client')),
    external_id        text NOT NULL,
    internal_id        uuid NOT NULL,
    created_at         timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (integration_key_id, entity_type, external_id)
);

-- Idempotency-Key cache; status is NULL while the first request is still executing.
CREATE TABLE idempotency_keys (
    integration_key_id uuid NOT NULL REFERENCES integration_keys (id),
    key                text NOT NULL,
    body_sha256        bytea NOT NULL,
    status             int,
    response_body      bytea,
    created_at         timestamptz NOT NULL DEFAULT now(),
    expires_at         timestamptz NOT NULL,
    PRIMARY KEY (integration_key_id, key)
);
CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);

-- The outbox: event rows are written in the same transaction as the business rows that cause them.
-- body is the exact JSON delivered (json, not jsonb, keeps the bytes); dispatched_at is set once a
-- workflow has been started for the event.
CREATE TABLE events (
    id            uuid PRIMARY KEY,
    org_id        uuid NOT NULL REFERENCES orgs (id),
    store_id      uuid,
    type          text NOT NULL,
    body          json NOT NULL,
    created_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
    dispatched_at timestamptz
);
CREATE INDEX events_undispatched ON events (created_at, id) WHERE dispatched_at IS NULL;
CREATE INDEX events_org ON events (org_id, created_at DESC, id DESC);

-- +goose Down
DROP TABLE events, idempotency_keys, external_refs, integration_keys;
