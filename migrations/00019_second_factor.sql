-- +goose Up
-- A second factor for staff accounts (TOTP), its recovery codes, the
-- clinic's choice to require one, and the list of an account's sessions.

-- Admins may require a second factor of every account of their clinic.
ALTER TABLE clinics ADD COLUMN require_second_factor boolean NOT NULL DEFAULT false;

-- An account's TOTP secret, sealed (AES-GCM under a key derived from the
-- server's key) so a dump of the database alone does not give it away.
-- confirmed_at is NULL while it is being set up: it counts only once a
-- first code from it was typed. last_step is the last time step (30 s)
-- whose code was accepted: a code is never taken twice.
CREATE TABLE staff_second_factors (
    staff_user_id uuid PRIMARY KEY REFERENCES staff_users (id) ON DELETE CASCADE,
    secret_sealed bytea NOT NULL,
    last_step     bigint NOT NULL DEFAULT 0,
    confirmed_at  timestamptz,
    created_at    timestamptz NOT NULL DEFAULT now()
);

-- Single-use recovery codes, as keyed hashes; a used one is deleted.
CREATE TABLE staff_recovery_codes (
    staff_user_id uuid NOT NULL REFERENCES staff_users (id) ON DELETE CASCADE,
    code_hash     bytea NOT NULL,
    PRIMARY KEY (staff_user_id, code_hash)
);

-- The signed-in sessions of staff accounts, beside the session store's
-- own table: keyed by the SHA-256 of the session token (the token itself
-- is stored only by the session store). ended_at marks a session its
-- owner or an admin ended: it is signed out even if a request that was
-- under way writes its session back.
CREATE TABLE staff_sessions (
    token_hash    bytea PRIMARY KEY,
    id            uuid NOT NULL UNIQUE DEFAULT gen_random_uuid(),
    staff_user_id uuid NOT NULL REFERENCES staff_users (id) ON DELETE CASCADE,
    browser       text NOT NULL DEFAULT '',
    address       text NOT NULL DEFAULT '',
    signed_in_at  timestamptz NOT NULL,
    last_seen_at  timestamptz NOT NULL,
    ended_at      timestamptz
);
CREATE INDEX staff_sessions_user ON staff_sessions (staff_user_id);

-- Finding a session of the store by the hash of its token (ending one
-- from the list). Tokens are URL-safe base64, so the cast is their bytes.
CREATE INDEX sessions_token_sha256 ON sessions (sha256(token::bytea));

-- +goose Down
DROP INDEX sessions_token_sha256;
DROP TABLE staff_sessions;
DROP TABLE staff_recovery_codes;
DROP TABLE staff_second_factors;
ALTER TABLE clinics DROP COLUMN require_second_factor;
