-- The removal of patients' details from a set of bookings of one clinic
-- (internal/privacy/scrub.go). Each statement takes the whole set, and
-- finds its rows through an index whatever the set's size: the set is
-- joined (unnest) rather than filtered, so that a generic plan cannot
-- choose to scan a clinic's whole history.

-- name: ScrubBookingsLock :many
-- The bookings of the set that are the clinic's, locked until the scrub
-- commits: two scrubs of one booking (the daily run and an erasure) take
-- turns, and the second finds nothing left to remove.
SELECT b.id FROM bookings b
JOIN unnest(sqlc.arg(ids)::uuid[]) AS s (id) ON b.id = s.id
WHERE b.clinic_id = sqlc.arg(clinic_id)
ORDER BY b.id
FOR UPDATE OF b;

-- name: ScrubMessagesOf :many
-- The messages about the bookings, and those telling of a move away from
-- one, with their jobs.
SELECT m.id, m.job_id FROM messages m JOIN unnest(sqlc.arg(ids)::uuid[]) AS s (id) ON m.booking_id = s.id
WHERE m.clinic_id = sqlc.arg(clinic_id)
UNION
SELECT m.id, m.job_id FROM messages m JOIN unnest(sqlc.arg(ids)::uuid[]) AS s (id) ON m.previous_id = s.id
WHERE m.clinic_id = sqlc.arg(clinic_id);

-- name: ScrubMessageCopies :execrows
DELETE FROM outbox_copies WHERE message_id = ANY(sqlc.arg(message_ids)::uuid[]);

-- name: ScrubMessages :execrows
DELETE FROM messages WHERE id = ANY(sqlc.arg(message_ids)::uuid[]);

-- name: ScrubBookingLinks :execrows
DELETE FROM booking_links WHERE booking_id = ANY(sqlc.arg(ids)::uuid[]);

-- name: ScrubIdempotencyKeys :execrows
-- Stored answers that tell of one of the bookings: their body (the
-- booking as answered, JSON) holds its id. The records live a day, so the
-- clinic's are few and the scan cheap.
DELETE FROM idempotency_keys k
WHERE k.clinic_id = sqlc.arg(clinic_id)
  AND EXISTS (SELECT 1 FROM unnest(sqlc.arg(ids)::uuid[]) AS b (id)
              WHERE position(convert_to(b.id::text, 'UTF8') IN k.body) > 0);

-- name: ScrubAuditRows :execrows
-- The audit rows of the bookings keep who did what and when, and the
-- booking's own fields (status, time, attendance); the patient and the
-- reasons go. JSON that is not an object is dropped whole.
UPDATE audit_log a
SET before = CASE WHEN jsonb_typeof(a.before) = 'object' THEN a.before - 'patient' - 'cancelReason' - 'reason' END,
    after = CASE WHEN jsonb_typeof(a.after) = 'object' THEN a.after - 'patient' - 'cancelReason' - 'reason' END,
    reason = ''
FROM unnest(sqlc.arg(ids)::text[]) AS s (id)
WHERE a.entity = 'booking' AND a.entity_id = s.id AND a.clinic_id = sqlc.arg(clinic_id)
  AND (a.reason <> ''
       OR (a.before IS NOT NULL AND (jsonb_typeof(a.before) <> 'object' OR a.before ?| ARRAY['patient', 'cancelReason', 'reason']))
       OR (a.after IS NOT NULL AND (jsonb_typeof(a.after) <> 'object' OR a.after ?| ARRAY['patient', 'cancelReason', 'reason'])));

-- name: ScrubBookings :execrows
-- The bookings lose every column that names or reaches the patient; the
-- name keeps a placeholder, since it is never empty. Bookings scrubbed
-- before are left as they are.
UPDATE bookings
SET patient_name = sqlc.arg(placeholder)::text, patient_email = '', patient_phone = '',
    patient_email_key = '', patient_phone_key = '', client_id = '', cancel_reason = '',
    language = '', manage_token_hash = NULL, anonymised_at = sqlc.arg(now)::timestamptz
WHERE id = ANY(sqlc.arg(ids)::uuid[]) AND anonymised_at IS NULL;
