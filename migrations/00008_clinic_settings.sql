-- +goose Up
-- What a clinic's admin sets on the settings page: how patients reach the
-- clinic, and the rules a new appointment type starts with (the type
-- keeps its own copy; changing a default never changes an existing type).
-- The ranges are those the types page accepts. clinics.version, which
-- refuses stale edits, exists since the first schema.
ALTER TABLE clinics
    ADD COLUMN contact_phone            text NOT NULL DEFAULT '',
    ADD COLUMN contact_email            text NOT NULL DEFAULT '',
    ADD COLUMN default_slot_step_min    integer NOT NULL DEFAULT 30
        CHECK (default_slot_step_min BETWEEN 5 AND 480),
    ADD COLUMN default_min_notice_min   integer NOT NULL DEFAULT 0
        CHECK (default_min_notice_min BETWEEN 0 AND 43200),
    ADD COLUMN default_max_advance_days integer NOT NULL DEFAULT 60
        CHECK (default_max_advance_days BETWEEN 1 AND 730),
    ADD COLUMN default_cooldown_min     integer NOT NULL DEFAULT 1440
        CHECK (default_cooldown_min BETWEEN 0 AND 525600);

-- +goose Down
ALTER TABLE clinics
    DROP COLUMN default_cooldown_min,
    DROP COLUMN default_max_advance_days,
    DROP COLUMN default_min_notice_min,
    DROP COLUMN default_slot_step_min,
    DROP COLUMN contact_email,
    DROP COLUMN contact_phone;
