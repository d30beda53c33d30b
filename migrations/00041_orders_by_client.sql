-- +goose Up
-- The console finds a client's orders by the client's email (issue 51): each of the org's clients
-- with that email (clients_store_email) has its orders read newest change first from this index, a
-- page at a time in either direction, however many orders the org has. Expand only: the previous
-- release's binary does not read it, and its writes keep it as they keep the others.
CREATE INDEX orders_client ON orders (client_id, updated_at DESC, id DESC) WHERE client_id IS NOT NULL;

-- +goose Down
DROP INDEX orders_client;
