-- +goose Up
-- The event feed (GET /v1/events, docs/read-api.md) orders an org's events by the transaction that
-- wrote them, xact_id, and hands out only those below the oldest transaction still running. Every
-- transaction below that horizon has ended, so no event can still appear behind a consumer's
-- position: the feed has no gaps however transactions interleave. The column is filled by its
-- default, so every writer (and a previous release's binary) records it without knowing of it.
--
-- Events written before this migration are all committed: they share the position 0 and keep their
-- creation order among themselves. The column is added without a default first (no rewrite of the
-- table), then given its default for new rows.
ALTER TABLE events ADD COLUMN xact_id xid8;
ALTER TABLE events ALTER COLUMN xact_id SET DEFAULT pg_current_xact_id();
UPDATE events SET xact_id = '0' WHERE xact_id IS NULL;
ALTER TABLE events ALTER COLUMN xact_id SET NOT NULL;

-- A feed page walks one index range per event type it reads and merges them in feed order
-- (internal/feed), so a page reads only its rows at any depth, with or without a types filter;
-- the second index does the same within one store. Webhook tests are not in the feed.
CREATE INDEX events_feed ON events (org_id, type, xact_id, created_at, id) WHERE type <> 'webhook.test';
CREATE INDEX events_feed_store ON events (org_id, store_id, type, xact_id, created_at, id)
    WHERE store_id IS NOT NULL AND type <> 'webhook.test';

-- +goose Down
DROP INDEX events_feed_store;
DROP INDEX events_feed;
ALTER TABLE events DROP COLUMN xact_id;
