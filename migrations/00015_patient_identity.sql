-- +goose Up
-- One patient, one identity. A clinic's country is the region its
-- patients' phone numbers are read in when written without a country
-- code (030 123456 is Berlin in Germany); every clinic so far is German.
ALTER TABLE clinics ADD COLUMN country text NOT NULL DEFAULT 'DE' CHECK (country ~ '^[A-Z]{2}$');

-- The keys the patient cooldown compares (internal/identity): every
-- spelling of one mailbox or one phone number has the same key. The
-- application computes them on every write of a booking's patient; the
-- stored address and number stay as the patient typed them.
-- cancelled_online: the patient cancelled it themselves (manage link or
-- API), so it keeps counting for the cooldown for an hour after the
-- cancel; a cancel by staff lifts it at once.
ALTER TABLE bookings
    ADD COLUMN patient_email_key text NOT NULL DEFAULT '',
    ADD COLUMN patient_phone_key text NOT NULL DEFAULT '',
    ADD COLUMN cancelled_online boolean NOT NULL DEFAULT false;

-- The keys of the rows written so far, as near the application's as SQL
-- comes: NFKC, lower case, no +tag, Gmail's dots and its second domain;
-- phone numbers in E.164 as German ones (every clinic's country until
-- now). Domains are not converted to their ASCII form here: an address
-- with a non-ASCII domain may keep a key its next booking does not share,
-- a bypass for one cooldown's length at most. The waitlist's migration
-- uses them too, then drops them: the application's keys are the rule.
-- +goose StatementBegin
CREATE FUNCTION migration_email_key(address text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    WITH spelled AS (
        SELECT lower(normalize(btrim(address), NFKC)) AS e
    ), parts AS (
        SELECT e,
               regexp_replace(substring(e FROM '^(.*)@'), '^([^+]+)\+.*$', '\1') AS local,
               CASE rtrim(substring(e FROM '@([^@]*)$'), '.')
                   WHEN 'googlemail.com' THEN 'gmail.com'
                   ELSE rtrim(substring(e FROM '@([^@]*)$'), '.') END AS domain
        FROM spelled
    )
    SELECT CASE
        WHEN domain IS NULL THEN e
        WHEN domain = 'gmail.com' THEN replace(local, '.', '') || '@gmail.com'
        ELSE local || '@' || domain END
    FROM parts
$$;
-- +goose StatementEnd
-- +goose StatementBegin
CREATE FUNCTION migration_phone_key(phone text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    WITH spelled AS (
        SELECT regexp_replace(btrim(phone), '\(0\)', '', 'g') AS p
    ), parts AS (
        SELECT p, regexp_replace(p, '\D', '', 'g') AS digits FROM spelled
    )
    SELECT CASE
        WHEN digits = '' THEN ''
        WHEN p LIKE '+%' THEN '+' || digits
        WHEN digits LIKE '00%' THEN '+' || substr(digits, 3)
        WHEN digits LIKE '0%' THEN '+49' || substr(digits, 2)
        ELSE '+49' || digits END
    FROM parts
$$;
-- +goose StatementEnd
UPDATE bookings
SET patient_email_key = migration_email_key(patient_email),
    patient_phone_key = migration_phone_key(patient_phone);

-- Who cancelled the bookings cancelled within the last hour, the only ones
-- whose cancel still counts, from the audit log.
UPDATE bookings b SET cancelled_online = true
WHERE b.status = 'cancelled' AND b.cancelled_at > now() - interval '1 hour'
  AND EXISTS (
      SELECT 1 FROM audit_log a
      WHERE a.entity = 'booking' AND a.entity_id = b.id::text
        AND a.action = 'booking.cancel' AND a.actor = 'patient');

-- The cooldown's lookups (BookingPatientCooldownUntil, BookingCreate),
-- under the patient's lock. The older indexes on lower(patient_email)
-- and the phone's digits stay for the queries that still compare the
-- typed spellings (the waitlist's match, no-show counts).
CREATE INDEX bookings_cooldown_email_key_idx
    ON bookings (appointment_type_id, patient_email_key, created_at)
    WHERE status = 'confirmed' OR cancelled_online;
CREATE INDEX bookings_cooldown_phone_key_idx
    ON bookings (appointment_type_id, patient_phone_key, created_at)
    WHERE (status = 'confirmed' OR cancelled_online) AND patient_phone_key <> '';

-- +goose Down
DROP FUNCTION IF EXISTS migration_phone_key(text);
DROP FUNCTION IF EXISTS migration_email_key(text);
DROP INDEX bookings_cooldown_phone_key_idx;
DROP INDEX bookings_cooldown_email_key_idx;
ALTER TABLE bookings DROP COLUMN cancelled_online, DROP COLUMN patient_phone_key, DROP COLUMN patient_email_key;
ALTER TABLE clinics DROP COLUMN country;
