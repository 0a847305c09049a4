-- The removal of patients' details from a set of bookings of one clinic
-- (internal/privacy/scrub.go). Each statement takes the whole set.

-- name: ScrubBookings :execrows
-- The bookings lose every column that names or reaches the patient; the
-- name keeps a placeholder, since it is never empty. Bookings scrubbed
-- before are left as they are.
UPDATE bookings
SET patient_name = sqlc.arg(placeholder)::text, patient_email = '', patient_phone = '',
    patient_email_key = '', patient_phone_key = '', client_id = '', cancel_reason = '',
    language = '', manage_token_hash = NULL, anonymised_at = sqlc.arg(now)::timestamptz
WHERE clinic_id = sqlc.arg(clinic_id) AND id = ANY(sqlc.arg(ids)::uuid[]) AND anonymised_at IS NULL;

-- name: ScrubMessageCopies :execrows
-- The stored e-mails of the bookings' messages (those about the booking,
-- and the notice of a move away from it).
DELETE FROM outbox_copies c
USING messages m
WHERE c.message_id = m.id AND m.clinic_id = sqlc.arg(clinic_id)
  AND (m.booking_id = ANY(sqlc.arg(ids)::uuid[]) OR m.previous_id = ANY(sqlc.arg(ids)::uuid[]));

-- name: ScrubMessages :execrows
DELETE FROM messages m
WHERE m.clinic_id = sqlc.arg(clinic_id)
  AND (m.booking_id = ANY(sqlc.arg(ids)::uuid[]) OR m.previous_id = ANY(sqlc.arg(ids)::uuid[]));

-- name: ScrubBookingLinks :execrows
DELETE FROM booking_links l
USING bookings b
WHERE l.booking_id = b.id AND b.clinic_id = sqlc.arg(clinic_id) AND b.id = ANY(sqlc.arg(ids)::uuid[]);

-- name: ScrubIdempotencyKeys :execrows
-- Stored answers that tell of one of the bookings: their body (the
-- booking as answered, JSON) holds its id. The records live a day, so the
-- table is small and the scan cheap.
DELETE FROM idempotency_keys k
WHERE k.clinic_id = sqlc.arg(clinic_id)
  AND EXISTS (SELECT 1 FROM unnest(sqlc.arg(ids)::uuid[]) AS b (id)
              WHERE position(convert_to(b.id::text, 'UTF8') IN k.body) > 0);

-- name: ScrubAuditRows :execrows
-- The audit rows of the bookings keep who did what and when, and the
-- booking's own fields (status, time, attendance); the patient and the
-- reasons go. JSON that is not an object is dropped whole.
UPDATE audit_log
SET before = CASE WHEN jsonb_typeof(before) = 'object' THEN before - 'patient' - 'cancelReason' - 'reason' END,
    after = CASE WHEN jsonb_typeof(after) = 'object' THEN after - 'patient' - 'cancelReason' - 'reason' END,
    reason = ''
WHERE clinic_id = sqlc.arg(clinic_id) AND entity = 'booking'
  AND entity_id = ANY(sqlc.arg(ids)::text[])
  AND (reason <> ''
       OR (before IS NOT NULL AND (jsonb_typeof(before) <> 'object' OR before ?| ARRAY['patient', 'cancelReason', 'reason']))
       OR (after IS NOT NULL AND (jsonb_typeof(after) <> 'object' OR after ?| ARRAY['patient', 'cancelReason', 'reason'])));
