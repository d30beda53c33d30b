-- +goose Up
-- The support desk's search by outcome walks this index in its own order, outcome first
-- (endpoints.walksOutcome), so no other index can serve that search without sorting the org's
-- events, and a cursor or an until bound of the search (a row comparison over outcome, created_at
-- and id) is where the walk starts. It holds what that search reads: the org's events apart from
-- webhook tests, which a search leaves out unless asked for by type (events_org_type serves that).
DROP INDEX events_org_outcome;
CREATE INDEX events_org_outcome ON events (org_id, outcome DESC, created_at DESC, id DESC) WHERE type <> 'webhook.test';

-- +goose Down
DROP INDEX events_org_outcome;
CREATE INDEX events_org_outcome ON events (org_id, outcome, created_at DESC, id DESC);
