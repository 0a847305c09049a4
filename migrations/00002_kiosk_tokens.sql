-- +goose Up
-- A kiosk is given a read-only device token by an admin; the board's URL
-- carries it. Only its hash is stored.
CREATE TABLE kiosk_tokens (
    id         uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    clinic_id  uuid NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    name       text NOT NULL CHECK (name <> ''),
    token_hash bytea NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now(),
    revoked_at timestamptz
);
CREATE INDEX kiosk_tokens_clinic_idx ON kiosk_tokens (clinic_id);

-- +goose Down
DROP TABLE kiosk_tokens;
