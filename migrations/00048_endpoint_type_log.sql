-- +goose Up
-- An endpoint's log filtered by an event type costs its page, like every other filter of the log.
-- Until now the endpoint's index led with (endpoint_id, status), so a rare type on a busy endpoint
-- read the endpoint's log and threw away every other type's rows.
--
-- The endpoint's index now fixes the type before the status, and replaces the old one rather than
-- joining it: a row still goes into seven indexes, which is what each attempt's insert costs the
-- primary. An endpoint and a type read one range per status, as the org's type filter does; an
-- endpoint alone first skips through the index a type at a time to find the types its log holds,
-- then reads one range per (type, status) and merges them in time order
-- (internal/deliverylog/log.go), so its page still reads its rows and one more per range.
--
-- A previous release's binary running beside this one still reads correctly: its endpoint log
-- pages, its recovery's count of skipped drops and its redaction of stored excerpts fix only the
-- endpoint and the status, so they read the endpoint's whole range of this index and sort what
-- matches, slower on a busy endpoint until it is replaced (docs/production.md, Upgrading).
CREATE INDEX webhook_deliveries_endpoint_type ON webhook_deliveries (endpoint_id, event_type, status, attempted_at DESC, id DESC);
DROP INDEX webhook_deliveries_endpoint_status;

-- +goose Down
CREATE INDEX webhook_deliveries_endpoint_status ON webhook_deliveries (endpoint_id, status, attempted_at DESC, id DESC);
DROP INDEX webhook_deliveries_endpoint_type;
