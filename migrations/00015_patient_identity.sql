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

-- The keys of the bookings made so far, as near the application's as SQL
-- comes: NFKC, lower case, no +tag, Gmail's dots and its second domain;
-- phone numbers in E.164 as German ones (every clinic's country until
-- now). Domains are not converted to their ASCII form here: an address
-- with a non-ASCII domain may keep a key its next booking does not share,
-- a bypass for one cooldown's length at most.
WITH spelled AS (
    SELECT id, lower(normalize(btrim(patient_email), NFKC)) AS e,
           regexp_replace(btrim(patient_phone), '\(0\)', '', 'g') AS p
    FROM bookings
), parts AS (
    SELECT id,
           regexp_replace(substring(e FROM '^(.*)@'), '^([^+]+)\+.*$', '\1') AS local,
           CASE rtrim(substring(e FROM '@([^@]*)$'), '.')
               WHEN 'googlemail.com' THEN 'gmail.com'
               ELSE rtrim(substring(e FROM '@([^@]*)$'), '.') END AS domain,
           e,
           p,
           regexp_replace(p, '\D', '', 'g') AS digits
    FROM spelled
)
UPDATE bookings b
SET patient_email_key = CASE
        WHEN parts.domain IS NULL THEN parts.e
        WHEN parts.domain = 'gmail.com' THEN replace(parts.local, '.', '') || '@gmail.com'
        ELSE parts.local || '@' || parts.domain END,
    patient_phone_key = CASE
        WHEN parts.digits = '' THEN ''
        WHEN parts.p LIKE '+%' THEN '+' || parts.digits
        WHEN parts.digits LIKE '00%' THEN '+' || substr(parts.digits, 3)
        WHEN parts.digits LIKE '0%' THEN '+49' || substr(parts.digits, 2)
        ELSE '+49' || parts.digits END
FROM parts
WHERE parts.id = b.id;

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
DROP INDEX bookings_cooldown_phone_key_idx;
DROP INDEX bookings_cooldown_email_key_idx;
ALTER TABLE bookings DROP COLUMN cancelled_online, DROP COLUMN patient_phone_key, DROP COLUMN patient_email_key;
ALTER TABLE clinics DROP COLUMN country;
