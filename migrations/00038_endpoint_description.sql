-- +goose Up
-- An endpoint's description (issue 51): what it is for, in the operator's words, shown wherever its
-- URL is; null when none. At most 200 characters.
ALTER TABLE webhook_endpoints ADD COLUMN description text CHECK (char_length(description) BETWEEN 1 AND 200);

-- +goose Down
ALTER TABLE webhook_endpoints DROP COLUMN description;
