-- The language each kiosk screen speaks: 'en', 'de', or 'both' (the
-- clinic's language and the other one, taking turns). A screen made
-- before screens had a language keeps speaking its clinic's.

-- +goose Up
ALTER TABLE kiosk_tokens ADD COLUMN language text;
UPDATE kiosk_tokens k SET language = c.language FROM clinics c WHERE c.id = k.clinic_id;
ALTER TABLE kiosk_tokens
    ALTER COLUMN language SET NOT NULL,
    ADD CONSTRAINT kiosk_tokens_language_check CHECK (language IN ('en', 'de', 'both'));

-- +goose Down
ALTER TABLE kiosk_tokens DROP COLUMN language;
