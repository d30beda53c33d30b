-- +goose Up
-- A re-fire counter belongs to its event: it numbers the event's chains queued by hand or by a
-- recovery. Deleting the event (the worker's pruning, past the retention) deletes its counters, so
-- the pruning statement is the events' owner's alone and names no other table.
--
-- Expand only: the previous release's pruning deletes the counters itself in the same statement as
-- their events, which the cascade allows. NOT VALID: every row satisfied the same reference under the
-- constraint this replaces, and validating would scan the table under its lock for nothing.
ALTER TABLE webhook_refire_counters DROP CONSTRAINT webhook_refire_counters_event_id_fkey,
    ADD CONSTRAINT webhook_refire_counters_event_id_fkey FOREIGN KEY (event_id) REFERENCES events (id)
        ON DELETE CASCADE NOT VALID;

-- +goose Down
ALTER TABLE webhook_refire_counters DROP CONSTRAINT webhook_refire_counters_event_id_fkey,
    ADD CONSTRAINT webhook_refire_counters_event_id_fkey FOREIGN KEY (event_id) REFERENCES events (id) NOT VALID;
