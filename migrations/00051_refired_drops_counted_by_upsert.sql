-- +goose Up
-- A drop re-fired is counted in its minute's first row by an upsert, no longer an update: the
-- retention job now folds every minute older than the health's day into one row of its hour
-- (delivery.FoldMinutes), and a drop re-fired after that finds no row of its minute to update. It
-- then starts one, which the overview's hourly sums add to the folded hour's row. A previous
-- release's update counted nothing there; its own minutes were never folded.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION wds_count_refired_drops() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO webhook_endpoint_minutes AS m (endpoint_id, org_id, minute, dropped_refired)
    SELECT d.endpoint_id, d.org_id, date_trunc('minute', d.attempted_at), count(*)
    FROM changed x JOIN webhook_deliveries d ON d.id = x.refired_delivery_id AND d.status = 'dropped'
    -- Only into an hour still kept: a drop older than the minutes kept is counted nowhere, as before.
    WHERE EXISTS (SELECT 1 FROM webhook_endpoint_minutes k WHERE k.endpoint_id = d.endpoint_id
        AND k.minute >= date_trunc('hour', d.attempted_at, 'UTC') AND k.minute < date_trunc('hour', d.attempted_at, 'UTC') + interval '1 hour')
    GROUP BY 1, 2, 3
    ON CONFLICT (endpoint_id, minute) DO UPDATE SET dropped_refired = m.dropped_refired + excluded.dropped_refired;
    RETURN NULL;
END;
$$;
-- +goose StatementEnd

-- +goose Down
-- 00034's count, an update of the minute's first row.
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION wds_count_refired_drops() RETURNS trigger LANGUAGE plpgsql AS $$
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
