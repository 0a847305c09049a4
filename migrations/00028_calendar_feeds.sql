-- +goose Up
-- Calendar subscriptions: a specialist's bookings, or a staff account's
-- own ("my appointments"), read by phone calendars from a secret address.
-- Only the SHA-256 of the address's token is kept; making a new address
-- revokes the one before it, so each owner has at most one that works.
CREATE TABLE calendar_feeds (
    id            uuid PRIMARY KEY DEFAULT gen_random_uuid(),
    clinic_id     uuid NOT NULL REFERENCES clinics (id) ON DELETE CASCADE,
    specialist_id uuid,
    staff_user_id uuid REFERENCES staff_users (id) ON DELETE CASCADE,
    token_hash    bytea NOT NULL UNIQUE CHECK (length(token_hash) = 32),
    created_at    timestamptz NOT NULL DEFAULT now(),
    revoked_at    timestamptz,
    -- A feed is a specialist's or an account's, never both.
    CHECK ((specialist_id IS NULL) <> (staff_user_id IS NULL)),
    FOREIGN KEY (clinic_id, specialist_id) REFERENCES specialists (clinic_id, id) ON DELETE CASCADE
);
CREATE UNIQUE INDEX calendar_feeds_one_per_specialist ON calendar_feeds (specialist_id)
    WHERE revoked_at IS NULL AND specialist_id IS NOT NULL;
CREATE UNIQUE INDEX calendar_feeds_one_per_account ON calendar_feeds (staff_user_id)
    WHERE revoked_at IS NULL AND staff_user_id IS NOT NULL;

-- The specialist a staff account is, set by an admin: the account's own
-- feed carries that specialist's bookings.
ALTER TABLE staff_users ADD COLUMN specialist_id uuid;
ALTER TABLE staff_users ADD CONSTRAINT staff_users_specialist_fkey
    FOREIGN KEY (clinic_id, specialist_id) REFERENCES specialists (clinic_id, id) ON DELETE SET NULL (specialist_id);

-- Patients' names in the feeds: off unless the clinic turns them on.
ALTER TABLE clinics ADD COLUMN feed_patient_names boolean NOT NULL DEFAULT false;

-- +goose Down
ALTER TABLE clinics DROP COLUMN feed_patient_names;
ALTER TABLE staff_users DROP CONSTRAINT staff_users_specialist_fkey;
ALTER TABLE staff_users DROP COLUMN specialist_id;
DROP TABLE calendar_feeds;
