-- name: PrivacyPatientBookings :many
-- Every booking of one patient at a clinic, past and future, in any
-- state: those whose e-mail key or phone key is the patient's (an empty
-- key matches nothing).
SELECT * FROM bookings
WHERE clinic_id = sqlc.arg(clinic_id)
  AND ((sqlc.arg(email_key)::text <> '' AND patient_email_key = sqlc.arg(email_key)::text)
    OR (sqlc.arg(phone_key)::text <> '' AND patient_phone_key = sqlc.arg(phone_key)::text))
ORDER BY slot_start, created_at;

-- name: PrivacyPatientPlaces :many
-- Every waitlist place of one patient at a clinic, by identity keys as
-- PrivacyPatientBookings, oldest first.
SELECT * FROM waitlist_entries
WHERE clinic_id = sqlc.arg(clinic_id)
  AND ((sqlc.arg(email_key)::text <> '' AND patient_email_key = sqlc.arg(email_key)::text)
    OR (sqlc.arg(phone_key)::text <> '' AND patient_phone_key = sqlc.arg(phone_key)::text))
ORDER BY joined_at;

-- name: PrivacyMessagesAbout :many
-- The messages about some bookings (as the booking, or as the previous
-- booking of a change notice) and some waitlist places, oldest first.
SELECT * FROM messages
WHERE booking_id = ANY(sqlc.arg(booking_ids)::uuid[])
   OR previous_id = ANY(sqlc.arg(booking_ids)::uuid[])
   OR entry_id = ANY(sqlc.arg(entry_ids)::uuid[])
ORDER BY created_at;

-- name: PrivacyLookups :many
-- A clinic's "find my booking" lists: messages about no booking or place,
-- whose recipient only the application can key.
SELECT id, recipient, recipient_key, status, created_at FROM messages
WHERE clinic_id = @clinic_id AND booking_id IS NULL AND entry_id IS NULL;

-- name: PrivacyMessagesByID :many
SELECT * FROM messages WHERE id = ANY(@ids::uuid[]) ORDER BY created_at;

-- name: PrivacyAuditAbout :many
-- The audit rows about some bookings and waitlist places, oldest first.
SELECT * FROM audit_log
WHERE clinic_id = @clinic_id
  AND ((entity = 'booking' AND entity_id = ANY(@booking_ids::text[]))
    OR (entity = 'waitlist_entry' AND entity_id = ANY(@entry_ids::text[])))
ORDER BY id;

-- name: PrivacyPlacesAuditScrub :execrows
-- The audit rows of waitlist places keep who did what and when, and lose
-- what was typed with it.
UPDATE audit_log SET before = NULL, after = NULL, reason = ''
WHERE clinic_id = @clinic_id AND entity = 'waitlist_entry' AND entity_id = ANY(@entry_ids::text[]);

-- name: PrivacyOpenOfferJobs :many
-- The follow-up jobs of the live offers made to some places: run now,
-- they pass the offered time on.
SELECT next_job_id FROM waitlist_offers
WHERE entry_id = ANY(@entry_ids::uuid[]) AND state = 'open' AND next_job_id IS NOT NULL;

-- name: PrivacyPlacesDelete :execrows
-- Deleting a place deletes its links, its offers and their messages and
-- stored copies with it (ON DELETE CASCADE).
DELETE FROM waitlist_entries WHERE id = ANY(@ids::uuid[]);

-- name: PrivacyMessagesDelete :many
-- Deletes messages (and their stored copies, by cascade) and returns the
-- jobs that sent them.
DELETE FROM messages WHERE id = ANY(@ids::uuid[]) RETURNING job_id;

-- name: PrivacySessions :many
-- Every session, to read the drafts in them (scs stores a session's
-- values encoded, so only the application can look inside).
SELECT token, data FROM sessions;

-- name: PrivacySessionsDelete :execrows
DELETE FROM sessions WHERE token = ANY(@tokens::text[]);

-- name: PrivacySessionSave :exec
UPDATE sessions SET data = @data WHERE token = @token;

-- name: ErasureInsert :exec
-- An entry of a clinic deleted since (its patients went with it) is not
-- kept.
INSERT INTO erasures (id, clinic_id, email_mac, phone_mac, key_id, erased_at)
SELECT @id, @clinic_id, @email_mac, @phone_mac, @key_id, @erased_at
WHERE EXISTS (SELECT 1 FROM clinics WHERE clinics.id = @clinic_id)
ON CONFLICT (id, clinic_id) DO NOTHING;

-- name: ErasureList :many
SELECT * FROM erasures ORDER BY erased_at, id;

-- name: PrivacyKeysByMAC :many
-- The identity keys of a clinic's bookings and waitlist places made up to
-- a time whose HMAC-SHA256 is among macs: the HMAC computed here from the
-- key's inner and outer pads (HMAC = H(K^opad || H(K^ipad || m))), so
-- that an erasure known only by its hash finds what it erased again.
WITH keyed AS (
    SELECT 'email'::text AS kind, patient_email_key AS key FROM bookings b
    WHERE b.clinic_id = @clinic_id AND b.created_at <= @until
    UNION
    SELECT 'phone'::text, patient_phone_key FROM bookings b
    WHERE b.clinic_id = @clinic_id AND b.created_at <= @until
    UNION
    SELECT 'email'::text, patient_email_key FROM waitlist_entries w
    WHERE w.clinic_id = @clinic_id AND w.joined_at <= @until
    UNION
    SELECT 'phone'::text, patient_phone_key FROM waitlist_entries w
    WHERE w.clinic_id = @clinic_id AND w.joined_at <= @until
    UNION
    SELECT 'email'::text, COALESCE(recipient_key, '') FROM messages m
    WHERE m.clinic_id = @clinic_id AND m.created_at <= @until
)
SELECT keyed.kind, keyed.key FROM keyed
WHERE keyed.key <> ''
  AND encode(sha256(sqlc.arg(opad)::bytea || sha256(sqlc.arg(ipad)::bytea || convert_to(keyed.key, 'UTF8'))), 'hex') = ANY(sqlc.arg(macs)::text[]);

-- name: PrivacyPatientLock :exec
-- One erasure of a patient at a time: two at once would each cancel and
-- scrub, and the second find what the first left.
SELECT pg_advisory_xact_lock(hashtextextended(concat_ws(':', 'privacy', sqlc.arg(clinic_id)::text, sqlc.arg(email_key)::text, sqlc.arg(phone_key)::text), 0));
