-- +goose Up
-- The outcome trigger's update (wds_keep_event_outcomes) finds an event's chains through two
-- inlined functions (wds_event_outcomes, wds_event_chains). Planned again for each attempt's ids, as
-- PL/pgSQL keeps doing when a generic plan is estimated dearer than the custom ones, it took 1.19 ms
-- of planning against 0.32 ms of running, per delivery (the benchmark's delivery-only line, with
-- pg_stat_statements counting planning). A generic plan, made once a connection, reads the same
-- indexes for any ids. A later CREATE OR REPLACE of the function must keep this setting.
ALTER FUNCTION wds_keep_event_outcomes() SET plan_cache_mode = force_generic_plan;

-- +goose Down
ALTER FUNCTION wds_keep_event_outcomes() RESET plan_cache_mode;
