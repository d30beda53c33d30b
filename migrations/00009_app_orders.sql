-- +goose Up
-- An order made by hand in the app (source kind app) may carry an external_id of the operator's
-- choosing; when it does, it is unique among the org's app orders, so a repeated create finds the
-- original instead of making a second order. This index is the final word when creates race (the
-- insert's ON CONFLICT names it). Integration orders' external ids are per integration key and
-- stay in external_refs; they are outside this index.
CREATE UNIQUE INDEX orders_app_external_id ON orders (org_id, external_id)
    WHERE source_kind = 'app' AND external_id IS NOT NULL;

-- +goose Down
DROP INDEX orders_app_external_id;
