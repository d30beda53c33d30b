-- +goose Up
-- The console's overview read 7 days of attempts on every load (issue 53); its charts are now read from the minutes each attempt's write already counts (succeeded, and
-- failed: every attempt that did not succeed), now also the drops among the failures, the first
-- attempts of re-fired and recovered chains, and the drops re-fired since; minutes are kept 8 days
-- instead of 25 hours. A drop's re-fire is counted by the trigger below, in the statement that
-- queues it (one re-fire a drop at most: webhook_dispatches_refired_delivery is unique).
--
-- Each minute names its endpoint's org, so the overview reads one range of the org's minutes (an
-- index entry per endpoint and minute: the counts themselves are updated in place).
ALTER TABLE webhook_endpoint_minutes
    ADD COLUMN org_id uuid,
    ADD COLUMN dropped bigint NOT NULL DEFAULT 0,
    ADD COLUMN refired bigint NOT NULL DEFAULT 0,
    ADD COLUMN dropped_refired bigint NOT NULL DEFAULT 0;
UPDATE webhook_endpoint_minutes m SET org_id = w.org_id FROM webhook_endpoints w WHERE w.id = m.endpoint_id;
ALTER TABLE webhook_endpoint_minutes ALTER COLUMN org_id SET NOT NULL;
CREATE INDEX webhook_endpoint_minutes_org ON webhook_endpoint_minutes (org_id, minute);

-- A previous release's binary counts minutes without naming the org: the endpoint's is filled in.
-- +goose StatementBegin
CREATE FUNCTION wds_minute_org() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    SELECT org_id INTO NEW.org_id FROM webhook_endpoints WHERE id = NEW.endpoint_id;
    RETURN NEW;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER webhook_endpoint_minutes_org BEFORE INSERT ON webhook_endpoint_minutes
    FOR EACH ROW WHEN (NEW.org_id IS NULL) EXECUTE FUNCTION wds_minute_org();

-- +goose StatementBegin
CREATE FUNCTION wds_count_refired_drops() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    UPDATE webhook_endpoint_minutes m SET dropped_refired = m.dropped_refired + c.n
    FROM (SELECT d.endpoint_id, date_trunc('minute', d.attempted_at) AS minute, count(*) AS n
          FROM changed x JOIN webhook_deliveries d ON d.id = x.refired_delivery_id AND d.status = 'dropped'
          GROUP BY 1, 2) c
    WHERE m.endpoint_id = c.endpoint_id AND m.minute = c.minute;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd
CREATE TRIGGER webhook_dispatches_count_refired AFTER INSERT ON webhook_dispatches
    REFERENCING NEW TABLE AS changed FOR EACH STATEMENT EXECUTE FUNCTION wds_count_refired_drops();

-- The last 8 days' minutes, counted again from the log, which holds every attempt.
INSERT INTO webhook_endpoint_minutes AS m (endpoint_id, org_id, minute, succeeded, failed, dropped, refired, dropped_refired)
SELECT d.endpoint_id, d.org_id, date_trunc('minute', d.attempted_at),
       count(*) FILTER (WHERE d.status = 'succeeded'), count(*) FILTER (WHERE d.status <> 'succeeded'),
       count(*) FILTER (WHERE d.status = 'dropped'),
       count(*) FILTER (WHERE d.attempt = 1 AND (d.workflow_id LIKE 'webhook-refire/%' OR d.workflow_id LIKE 'webhook-recovery/%')),
       count(*) FILTER (WHERE d.status = 'dropped' AND EXISTS (
           SELECT 1 FROM webhook_dispatches r WHERE r.refired_delivery_id = d.id))
FROM webhook_deliveries d WHERE d.attempted_at >= date_trunc('minute', clock_timestamp() - interval '8 days')
GROUP BY d.endpoint_id, d.org_id, date_trunc('minute', d.attempted_at)
ON CONFLICT (endpoint_id, minute) DO UPDATE SET succeeded = excluded.succeeded, failed = excluded.failed,
    dropped = excluded.dropped, refired = excluded.refired, dropped_refired = excluded.dropped_refired;

-- +goose Down
DROP TRIGGER webhook_endpoint_minutes_org ON webhook_endpoint_minutes;
DROP FUNCTION wds_minute_org();
DROP INDEX webhook_endpoint_minutes_org;
DROP TRIGGER webhook_dispatches_count_refired ON webhook_dispatches;
DROP FUNCTION wds_count_refired_drops();
ALTER TABLE webhook_endpoint_minutes DROP COLUMN dropped_refired, DROP COLUMN refired, DROP COLUMN dropped, DROP COLUMN org_id;
