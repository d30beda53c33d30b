-- +goose Up
-- A recovery's skipped chains (issue 51): the dropped chains of its window that it does not re-fire
-- because their event already went to the endpoint again after they dropped (a re-fire, a resend or
-- another recovery's chain). Counted when the recovery is asked for, beside total.
ALTER TABLE webhook_recoveries ADD COLUMN skipped integer NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE webhook_recoveries DROP COLUMN skipped;
