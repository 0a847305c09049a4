-- An appointment type's name and description in the languages the pages
-- speak beside the one its name and description are written in, keyed by
-- language: {"de": {"name": "Beratung", "description": "..."}}. A page,
-- e-mail or calendar file in a language the object lacks shows the name
-- and description as they are.

-- +goose Up
ALTER TABLE appointment_types
    ADD COLUMN translations jsonb NOT NULL DEFAULT '{}'
        CHECK (jsonb_typeof(translations) = 'object');

-- +goose Down
ALTER TABLE appointment_types DROP COLUMN translations;
