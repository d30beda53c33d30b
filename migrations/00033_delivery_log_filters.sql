-- +goose Up
-- Every read of the delivery log costs its page, whatever the filter (issue 53). Until now the org's
-- log had one index, (org_id, attempted_at), so a rare status or type walked the org's history up to
-- the statement timeout.
--
-- Each index below leads with what a filter fixes and then status, so a page walks one range per
-- status (three at most) and merges them in time order (internal/endpoints/deliverylog.go): the org's
-- log, by status, by event type (and status), and an endpoint's log (and status). The endpoint's
-- replaces webhook_deliveries_keyset and the recoveries' webhook_deliveries_dropped (its 'dropped'
-- range, read backwards); the org's replaces webhook_deliveries_org_keyset and, for the retention
-- job, webhook_deliveries_attempted (each org's oldest rows of each status are one of its ranges;
-- an index on time alone also tempted the planner to walk every org's rows for one org's page). A
-- row goes into as many indexes as before: the key, these three and the support desk's by event.
--
-- A previous release's binary running beside this one still reads correctly; its org-wide and
-- endpoint log pages, which order by time alone, sort the matching rows instead of reading an index
-- in order, and its retention job reads the log whole, until it is replaced (docs/production.md,
-- Upgrading).
CREATE INDEX webhook_deliveries_org_status ON webhook_deliveries (org_id, status, attempted_at DESC, id DESC);
CREATE INDEX webhook_deliveries_org_type ON webhook_deliveries (org_id, event_type, status, attempted_at DESC, id DESC);
CREATE INDEX webhook_deliveries_endpoint_status ON webhook_deliveries (endpoint_id, status, attempted_at DESC, id DESC);
DROP INDEX webhook_deliveries_org_keyset;
DROP INDEX webhook_deliveries_keyset;
DROP INDEX webhook_deliveries_dropped;
DROP INDEX webhook_deliveries_attempted;

-- +goose Down
CREATE INDEX webhook_deliveries_attempted ON webhook_deliveries (attempted_at);
CREATE INDEX webhook_deliveries_dropped ON webhook_deliveries (endpoint_id, attempted_at, id) WHERE status = 'dropped';
CREATE INDEX webhook_deliveries_keyset ON webhook_deliveries (endpoint_id, attempted_at DESC, id DESC);
CREATE INDEX webhook_deliveries_org_keyset ON webhook_deliveries (org_id, attempted_at DESC, id DESC);
DROP INDEX webhook_deliveries_endpoint_status;
DROP INDEX webhook_deliveries_org_type;
DROP INDEX webhook_deliveries_org_status;
