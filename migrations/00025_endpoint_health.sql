-- +goose Up
-- An endpoint's health is kept by each attempt's own write (endpoints.RecordAttempt) instead of being
-- counted from the delivery log on every read: auto-disable's decision reads the endpoint's row and
-- the endpoint list reads no delivery rows, however long an outage has lasted (issue 39).
-- failing_since is the first failed attempt after the last success (or the last enable),
-- consecutive_dropped the chains dropped since then.
ALTER TABLE webhook_endpoints
    ADD COLUMN last_success_at timestamptz,
    ADD COLUMN failing_since timestamptz,
    ADD COLUMN consecutive_dropped bigint NOT NULL DEFAULT 0;

-- The attempts of each minute, by endpoint: the health's 24-hour counts sum at most 1,441 of them.
-- Minutes older than a day are deleted by the retention job.
CREATE TABLE webhook_endpoint_minutes (
    endpoint_id uuid NOT NULL REFERENCES webhook_endpoints (id) ON DELETE CASCADE,
    minute      timestamptz NOT NULL,
    succeeded   bigint NOT NULL DEFAULT 0,
    failed      bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (endpoint_id, minute)
);

-- Backfill from the log, as the health was read until now.
UPDATE webhook_endpoints w SET last_success_at = s.last_success_at
FROM (SELECT endpoint_id, max(attempted_at) AS last_success_at FROM webhook_deliveries
      WHERE status = 'succeeded' GROUP BY endpoint_id) s
WHERE s.endpoint_id = w.id;

UPDATE webhook_endpoints w SET failing_since = f.failing_since, consecutive_dropped = f.consecutive_dropped
FROM (SELECT d.endpoint_id, min(d.attempted_at) FILTER (WHERE d.status <> 'succeeded') AS failing_since,
             count(DISTINCT d.chain_id) FILTER (WHERE d.status = 'dropped') AS consecutive_dropped
      FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id
      WHERE d.attempted_at > greatest(coalesce(e.last_success_at, '-infinity'), coalesce(e.health_reset_at, '-infinity'))
      GROUP BY d.endpoint_id) f
WHERE f.endpoint_id = w.id;

INSERT INTO webhook_endpoint_minutes (endpoint_id, minute, succeeded, failed)
SELECT endpoint_id, date_trunc('minute', attempted_at),
       count(*) FILTER (WHERE status = 'succeeded'), count(*) FILTER (WHERE status <> 'succeeded')
FROM webhook_deliveries WHERE attempted_at >= clock_timestamp() - interval '25 hours'
GROUP BY 1, 2;

-- +goose Down
DROP TABLE webhook_endpoint_minutes;
ALTER TABLE webhook_endpoints DROP COLUMN consecutive_dropped, DROP COLUMN failing_since, DROP COLUMN last_success_at;
