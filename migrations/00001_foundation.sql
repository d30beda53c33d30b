-- +goose Up
-- Workspace, people, read keys, the readable resources and the audit log.
-- Every list is served by a (scope, updated_at DESC, id DESC) index so a page is a keyset index scan.

CREATE TABLE orgs (
    id         uuid PRIMARY KEY,
    name       text NOT NULL CHECK (name <> ''),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE stores (
    id         uuid PRIMARY KEY,
    org_id     uuid NOT NULL REFERENCES orgs (id),
    name       text NOT NULL CHECK (name <> ''),
    currency   char(3) NOT NULL DEFAULT 'USD' CHECK (currency ~ '^[A-Z]{3}$'),
    created_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (org_id, id)
);

CREATE TABLE users (
    id         uuid PRIMARY KEY,
    email      text NOT NULL,
    token_hash bytea NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE memberships (
    org_id     uuid NOT NULL REFERENCES orgs (id),
    user_id    uuid NOT NULL REFERENCES users (id),
    role       text NOT NULL CHECK (role IN ('owner', 'admin', 'member')),
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, user_id)
);

CREATE TABLE read_keys (
    id           uuid PRIMARY KEY,
    org_id       uuid NOT NULL REFERENCES orgs (id),
    name         text NOT NULL DEFAULT '',
    key_hash     bytea NOT NULL UNIQUE,
    key_hint     text NOT NULL,
    scope        text NOT NULL DEFAULT 'read_only' CHECK (scope IN ('read_only', 'read_write')),
    created_by   uuid NOT NULL REFERENCES users (id),
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz,
    revoked_at   timestamptz,
    last_used_at timestamptz
);
CREATE INDEX read_keys_org ON read_keys (org_id, created_at DESC, id DESC);

CREATE TABLE audit_log (
    id          uuid PRIMARY KEY,
    org_id      uuid NOT NULL REFERENCES orgs (id),
    actor_id    uuid NOT NULL REFERENCES users (id),
    action      text NOT NULL,
    target_type text NOT NULL,
    target_id   uuid NOT NULL,
    details     jsonb NOT NULL DEFAULT '{}',
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX audit_log_keyset ON audit_log (org_id, created_at DESC, id DESC);

-- updated_at is stamped by the database so every writer (API, CLI, psql) advances it the same way.
-- clock_timestamp, not now(): rows changed twice in one transaction still move forward.
-- +goose StatementBegin
CREATE FUNCTION wds_touch_updated_at() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    NEW.updated_at := clock_timestamp();
    RETURN NEW;
END;
$$;
-- +goose StatementEnd

CREATE TABLE clients (
    id                        uuid PRIMARY KEY,
    org_id                    uuid NOT NULL REFERENCES orgs (id),
    store_id                  uuid NOT NULL,
    email                     text,
    display_name              text NOT NULL DEFAULT '',
    first_name                text NOT NULL DEFAULT '',
    last_name                 text NOT NULL DEFAULT '',
    phone                     text NOT NULL DEFAULT '',
    client_type               text NOT NULL DEFAULT 'retail',
    tags                      text[] NOT NULL DEFAULT '{}',
    billing_address           jsonb,
    source_label              text,
    source_external_id        text,
    source_integration_key_id uuid,
    created_at                timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at                timestamptz NOT NULL DEFAULT clock_timestamp(),
    FOREIGN KEY (org_id, store_id) REFERENCES stores (org_id, id)
);
CREATE INDEX clients_keyset ON clients (org_id, updated_at DESC, id DESC);
CREATE INDEX clients_store_keyset ON clients (store_id, updated_at DESC, id DESC);
CREATE INDEX clients_store_email ON clients (store_id, lower(email)) WHERE email IS NOT NULL;
CREATE TRIGGER clients_touch BEFORE UPDATE ON clients FOR EACH ROW EXECUTE FUNCTION wds_touch_updated_at();

CREATE TABLE vendors (
    id         uuid PRIMARY KEY,
    org_id     uuid NOT NULL REFERENCES orgs (id),
    store_id   uuid NOT NULL,
    name       text NOT NULL CHECK (name <> ''),
    email      text,
    created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at timestamptz NOT NULL DEFAULT clock_timestamp(),
    FOREIGN KEY (org_id, store_id) REFERENCES stores (org_id, id)
);
CREATE INDEX vendors_keyset ON vendors (org_id, updated_at DESC, id DESC);
CREATE INDEX vendors_store_keyset ON vendors (store_id, updated_at DESC, id DESC);
CREATE TRIGGER vendors_touch BEFORE UPDATE ON vendors FOR EACH ROW EXECUTE FUNCTION wds_touch_updated_at();

-- Sellers are marketplace parties outside any org; an org sees their products through a link to one of
-- its stores.
CREATE TABLE sellers (
    id         uuid PRIMARY KEY,
    name       text NOT NULL CHECK (name <> ''),
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE seller_links (
    org_id     uuid NOT NULL REFERENCES orgs (id),
    seller_id  uuid NOT NULL REFERENCES sellers (id),
    store_id   uuid NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (org_id, seller_id),
    FOREIGN KEY (org_id, store_id) REFERENCES stores (org_id, id)
);

CREATE TABLE products (
    id          uuid PRIMARY KEY,
    seller_id   uuid NOT NULL REFERENCES sellers (id),
    name        text NOT NULL CHECK (name <> ''),
    sku         text,
    price_cents bigint NOT NULL CHECK (price_cents >= 0),
    currency    char(3) NOT NULL DEFAULT 'USD',
    published   boolean NOT NULL DEFAULT false,
    created_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at  timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX products_published_keyset ON products (seller_id, updated_at DESC, id DESC) WHERE published;
CREATE TRIGGER products_touch BEFORE UPDATE ON products FOR EACH ROW EXECUTE FUNCTION wds_touch_updated_at();

CREATE TABLE orders (
    id                        uuid PRIMARY KEY,
    org_id                    uuid NOT NULL REFERENCES orgs (id),
    store_id                  uuid NOT NULL,
    number                    bigint NOT NULL,
    client_id                 uuid REFERENCES clients (id),
    external_id               text,
    currency                  char(3) NOT NULL CHECK (currency ~ '^[A-Z]{3}$'),
    subtotal_cents            bigint NOT NULL CHECK (subtotal_cents >= 0),
    shipping_cents            bigint NOT NULL DEFAULT 0 CHECK (shipping_cents >= 0),
    tax_cents                 bigint NOT NULL DEFAULT 0 CHECK (tax_cents >= 0),
    total_cents               bigint NOT NULL CHECK (total_cents >= 0),
    amount_paid_cents         bigint NOT NULL DEFAULT 0 CHECK (amount_paid_cents >= 0),
    status                    text NOT NULL CHECK (status IN ('draft', 'invoiced', 'partially_paid', 'paid', 'cancelled', 'refunded')),
    metadata                  jsonb NOT NULL DEFAULT '{}',
    source_kind               text NOT NULL DEFAULT 'app' CHECK (source_kind IN ('app', 'integration')),
    source_integration_key_id uuid,
    source_label              text,
    created_at                timestamptz NOT NULL DEFAULT clock_timestamp(),
    updated_at                timestamptz NOT NULL DEFAULT clock_timestamp(),
    cancelled_at              timestamptz,
    FOREIGN KEY (org_id, store_id) REFERENCES stores (org_id, id),
    UNIQUE (org_id, number)
);
CREATE INDEX orders_keyset ON orders (org_id, updated_at DESC, id DESC);
CREATE INDEX orders_store_keyset ON orders (store_id, updated_at DESC, id DESC);
CREATE TRIGGER orders_touch BEFORE UPDATE ON orders FOR EACH ROW EXECUTE FUNCTION wds_touch_updated_at();

CREATE TABLE order_lines (
    order_id         uuid NOT NULL REFERENCES orders (id) ON DELETE CASCADE,
    position         int NOT NULL CHECK (position >= 0),
    description      text NOT NULL DEFAULT '',
    quantity         bigint NOT NULL CHECK (quantity >= 1),
    unit_price_cents bigint NOT NULL CHECK (unit_price_cents >= 0),
    metadata         jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (order_id, position)
);

CREATE TABLE payments (
    id                  uuid PRIMARY KEY,
    order_id            uuid NOT NULL REFERENCES orders (id),
    external_id         text,
    amount_cents        bigint NOT NULL CHECK (amount_cents > 0),
    method              text NOT NULL DEFAULT '',
    provider            text NOT NULL DEFAULT '',
    provider_payment_id text NOT NULL DEFAULT '',
    paid_at             timestamptz NOT NULL DEFAULT clock_timestamp(),
    refunded_at         timestamptz,
    created_at          timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX payments_order ON payments (order_id, created_at);

-- Order numbers come from one sequence per org (created with the org): nextval never waits for another
-- transaction, so concurrent creates in one org do not serialize on a counter row. Gaps are allowed.
-- +goose StatementBegin
CREATE FUNCTION wds_order_number_sequence(org uuid) RETURNS text LANGUAGE sql IMMUTABLE AS $$
    SELECT 'order_number_' || replace(org::text, '-', '')
$$;
-- +goose StatementEnd

-- +goose Down
DROP FUNCTION wds_order_number_sequence(uuid);
DROP TABLE payments, order_lines, orders, products, seller_links, sellers, vendors, clients, audit_log,
    read_keys, memberships, users, stores, orgs;
DROP FUNCTION wds_touch_updated_at();
