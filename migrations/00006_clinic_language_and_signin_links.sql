-- +goose Up
-- The language a clinic's pages speak to its patients and staff.
ALTER TABLE clinics ADD COLUMN language text NOT NULL DEFAULT 'en'
    CHECK (language IN ('en', 'de'));

-- One-time sign-in links: the way a new account (a clinic's first admin)
-- or an account whose password was reset chooses its password. Only the
-- SHA-256 of the token is kept; a link works once, until it expires, and
-- not after a newer link of the same account was made (revoked_at).
CREATE TABLE staff_signin_links (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    clinic_id     uuid NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    staff_user_id uuid NOT NULL REFERENCES staff_users (id) ON DELETE CASCADE,
    token_hash    bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at    timestamptz NOT NULL DEFAULT now(),
    expires_at    timestamptz NOT NULL,
    used_at       timestamptz,
    revoked_at    timestamptz
);
CREATE INDEX staff_signin_links_user_idx ON staff_signin_links (staff_user_id) WHERE used_at IS NULL AND revoked_at IS NULL;

-- +goose Down
DROP TABLE staff_signin_links;
ALTER TABLE clinics DROP COLUMN language;
