-- name: BookingInsert :one
-- The booking gate. The arbiter repeats the partial index's predicate; the
-- exclusion constraint cannot be an arbiter and surfaces as SQLSTATE 23P01.
-- resource_id names the room a hold promised (NULL: the trigger
-- bookings_take_resource chooses one, if the type needs one).
INSERT INTO bookings (
    clinic_id, appointment_type_id, specialist_id, slot_start, slot_end,
    patient_name, patient_email, patient_phone, patient_email_key, patient_phone_key,
    client_id, manage_token_hash, rescheduled_from, language, resource_id
) VALUES (
    @clinic_id, @appointment_type_id, @specialist_id, @slot_start, @slot_end,
    @patient_name, @patient_email, @patient_phone, @patient_email_key, @patient_phone_key,
    @client_id, @manage_token_hash, @rescheduled_from, @language, sqlc.narg(resource_id)
)
ON CONFLICT (specialist_id, slot_start, clinic_id) WHERE status = 'confirmed' DO NOTHING
RETURNING *;

-- name: BookingGet :one
SELECT * FROM bookings WHERE id = @id;

-- name: BookingGetForUpdate :one
SELECT * FROM bookings WHERE id = @id FOR UPDATE;

-- name: BookingGetByTokenHash :one
-- The booking a manage link opens: the link of its confirmation page, or
-- one that an e-mail carried (booking_links).
SELECT * FROM bookings
WHERE manage_token_hash = @manage_token_hash
   OR id = (SELECT booking_id FROM booking_links WHERE token_hash = @manage_token_hash);

-- name: BookingLinkAdd :exec
-- The link takes its booking's clinic; a booking that does not exist
-- leaves the clinic NULL, which the column refuses (an error, not a link
-- silently left out of an e-mail).
INSERT INTO booking_links (token_hash, booking_id, clinic_id)
VALUES (@token_hash, @booking_id, (SELECT b.clinic_id FROM bookings b WHERE b.id = @booking_id));

-- name: BookingLinksMove :exec
-- A moved booking's links open the new booking.
UPDATE booking_links SET booking_id = @to_id WHERE booking_id = @from_id;

-- name: BookingSetStatus :one
-- cancelled_online: the patient cancelled it themselves (a manage link,
-- the API), which keeps it in their cooldown for a while.
UPDATE bookings
SET status = @status, cancel_reason = @cancel_reason, cancelled_at = now(), cancelled_online = @cancelled_online,
    manage_token_hash = CASE WHEN @keep_token::boolean THEN manage_token_hash ELSE NULL END,
    version = version + 1
WHERE id = @id
RETURNING *;

-- name: BookingListConfirmedByType :many
-- Confirmed bookings of every specialist who performs the type, in any type,
-- with the buffers of their own type, for the slot engine.
SELECT b.specialist_id, b.slot_start, b.slot_end, t.buffer_before_min, t.buffer_after_min
FROM bookings b
JOIN appointment_types t ON t.id = b.appointment_type_id
WHERE b.status = 'confirmed'
  AND b.specialist_id IN (
      SELECT ats.specialist_id FROM appointment_type_specialists ats
      WHERE ats.appointment_type_id = @appointment_type_id)
  AND b.slot_start > sqlc.arg(range_start)::timestamptz - interval '24 hours'
  AND b.slot_start < @range_end
  AND b.slot_end > @range_start
ORDER BY b.specialist_id, b.slot_start;

-- name: BookingCountConfirmedAt :one
SELECT count(*) FROM bookings
WHERE specialist_id = @specialist_id AND slot_start = @slot_start AND status = 'confirmed';

-- name: BookingListConfirmedBySpecialistRange :many
SELECT slot_start, slot_end FROM bookings
WHERE specialist_id = @specialist_id AND status = 'confirmed'
  AND slot_start > sqlc.arg(range_start)::timestamptz - interval '24 hours'
  AND slot_start < @range_end AND slot_end > @range_start
ORDER BY slot_start;

-- name: BookingOverlapExists :one
SELECT EXISTS (
    SELECT 1 FROM bookings
    WHERE specialist_id = ANY(@specialist_ids::uuid[]) AND status = 'confirmed'
      AND slot_start > sqlc.arg(range_start)::timestamptz - interval '24 hours'
      AND slot_start < @range_end AND slot_end > @range_start
      AND id <> @exclude_id
);

-- name: BookingCalendar :many
-- A clinic's confirmed bookings in a range, for the staff calendar, with
-- whether each patient came, the room each holds and whether its type
-- needs one.
SELECT b.id, b.specialist_id, b.appointment_type_id, b.slot_start, b.slot_end, b.patient_name, b.patient_email,
       b.patient_phone, b.version, b.attendance, t.name AS type_name, s.name AS specialist_name,
       b.resource_id,
       EXISTS (SELECT 1 FROM appointment_type_resources n
               WHERE n.clinic_id = b.clinic_id AND n.appointment_type_id = b.appointment_type_id) AS needs_room
FROM bookings b
JOIN appointment_types t ON t.id = b.appointment_type_id
JOIN specialists s ON s.id = b.specialist_id
WHERE b.clinic_id = @clinic_id AND b.status = 'confirmed'
  AND b.slot_start > sqlc.arg(range_start)::timestamptz - interval '24 hours'
  AND b.slot_start < @range_end AND b.slot_end > @range_start
ORDER BY b.slot_start, s.priority DESC;

-- name: BookingSearch :many
SELECT b.id, b.specialist_id, b.slot_start, b.slot_end, b.status, b.patient_name, b.patient_email, b.patient_phone,
       t.name AS type_name, s.name AS specialist_name
FROM bookings b
JOIN appointment_types t ON t.id = b.appointment_type_id
JOIN specialists s ON s.id = b.specialist_id
WHERE b.clinic_id = @clinic_id
  AND (@q::text = '' OR b.patient_name ILIKE '%' || @q || '%' OR b.patient_email ILIKE '%' || @q || '%' OR b.patient_phone ILIKE '%' || @q || '%')
  AND b.slot_start >= @range_start AND b.slot_start < @range_end
ORDER BY b.slot_start
LIMIT 200;

-- name: BookingListFutureBySpecialist :many
SELECT b.id, b.slot_start, b.slot_end, b.patient_name, t.name AS type_name
FROM bookings b JOIN appointment_types t ON t.id = b.appointment_type_id
WHERE b.specialist_id = @specialist_id AND b.clinic_id = @clinic_id AND b.status = 'confirmed' AND b.slot_start >= now()
ORDER BY b.slot_start;

-- name: BookingTargetGet :one
-- What the gate checks before an insert, in one round trip: the type, and
-- whether the specialist exists at the type's clinic, is active and
-- performs it.
SELECT sqlc.embed(appointment_types),
       (s.id IS NOT NULL)::boolean AS specialist_found,
       COALESCE(s.clinic_id = appointment_types.clinic_id, false)::boolean AS same_clinic,
       COALESCE(s.active, false)::boolean AS specialist_active,
       EXISTS (
           SELECT 1 FROM appointment_type_specialists ats
           WHERE ats.appointment_type_id = appointment_types.id AND ats.specialist_id = @specialist_id
       )::boolean AS performs,
       (SELECT c.country FROM clinics c WHERE c.id = appointment_types.clinic_id)::text AS clinic_country
FROM appointment_types
LEFT JOIN specialists s ON s.id = @specialist_id
WHERE appointment_types.id = @appointment_type_id;

-- name: BookingClinicCountry :one
-- The region a clinic's patients' phone numbers are read in.
SELECT country FROM clinics WHERE id = @clinic_id;

-- name: BookingPatientLock :exec
-- Serialises one patient's bookings of one type, by the e-mail's key and
-- by the phone's key when there is one (internal/identity), until the
-- transaction ends: the cooldown check that follows, a statement of its
-- own, then sees the other's commit. The e-mail's lock is always taken
-- first.
SELECT pg_advisory_xact_lock(hashtextextended('booking-patient:' || sqlc.arg(appointment_type_id)::uuid::text || ':' || k, 0))
FROM unnest(ARRAY[
    'e:' || sqlc.arg(email_key)::text,
    CASE WHEN sqlc.arg(phone_key)::text <> '' THEN 'p:' || sqlc.arg(phone_key)::text END
]) WITH ORDINALITY AS keys (k, n)
WHERE k IS NOT NULL
ORDER BY n;

-- name: BookingPatientCooldownUntil :one
-- When the patient's cooldown for the type ends: the latest end of the
-- cooldowns of their bookings of it (the same e-mail key, or the same
-- phone key; internal/identity), other than exclude_id; the epoch when
-- none runs. A confirmed booking's cooldown is the type's from its
-- making; one the patient cancelled online keeps it until cancel_keeps_sec
-- after the cancel, so booking and cancelling again and again is no way
-- around it; one cancelled by staff has none.
SELECT COALESCE(max(LEAST(
           b.created_at + make_interval(mins => t.cooldown_min),
           CASE WHEN b.status = 'confirmed' THEN 'infinity'::timestamptz
                ELSE b.cancelled_at + make_interval(secs => sqlc.arg(cancel_keeps_sec)::int) END
       )), 'epoch')::timestamptz AS until
FROM bookings b
JOIN appointment_types t ON t.id = b.appointment_type_id
WHERE b.appointment_type_id = @appointment_type_id AND t.cooldown_min > 0
  AND (b.status = 'confirmed'
       OR (b.cancelled_online AND b.cancelled_at > now() - make_interval(secs => sqlc.arg(cancel_keeps_sec)::int)))
  AND b.id <> @exclude_id
  AND b.created_at > now() - make_interval(mins => t.cooldown_min)
  AND (b.patient_email_key = sqlc.arg(email_key)::text
       OR (sqlc.arg(phone_key)::text <> '' AND b.patient_phone_key = sqlc.arg(phone_key)::text));

-- name: BookingSpecialistLock :exec
-- Serialises the bookings of one specialist until the transaction ends.
-- Two inserts of overlapping times each find the other's uncommitted row in
-- the exclusion constraint's index (or its speculative insertion) and wait
-- for each other: a deadlock that PostgreSQL breaks by aborting one after a
-- second. Under this lock the second insert starts only once the first has
-- committed or rolled back, and sees it. Taken after the patient's lock and
-- before any booking row is changed, on every path.
SELECT pg_advisory_xact_lock(hashtextextended('booking-specialist:' || sqlc.arg(specialist_id)::uuid::text, 0));

-- name: BookingCreate :one
-- The gate, its audit row and its idempotency record in one statement: one
-- round trip for the common case. The target check repeats BookingTargetGet
-- (type of the clinic, specialist of the clinic, active, performing it,
-- the type's length) and, for a patient's booking (check_cooldown), the
-- cooldown of BookingPatientCooldownUntil, which needs BookingPatientLock
-- taken by an earlier statement of the same transaction. The count is 0
-- when a check failed or the slot is taken; an overlap (23P01) or a live
-- idempotency record (23505) fails the whole statement. In each case
-- nothing is written, and the caller asks the step-by-step gate
-- (BookingTargetGet, BookingInsert, ...) why.
WITH cooling AS (
    -- The e-mail key's bookings and the phone key's, each read by its own
    -- index (type, key, made): one scan with the two keys OR-ed would
    -- read every booking of the type.
    SELECT 1
    FROM appointment_types t
    CROSS JOIN LATERAL (
        SELECT b.status, b.cancelled_online, b.cancelled_at, b.created_at FROM bookings b
        WHERE b.appointment_type_id = t.id AND b.patient_email_key = sqlc.arg(patient_email_key)::text
          AND (b.status = 'confirmed' OR b.cancelled_online)
        UNION ALL
        SELECT b.status, b.cancelled_online, b.cancelled_at, b.created_at FROM bookings b
        WHERE b.appointment_type_id = t.id AND sqlc.arg(patient_phone_key)::text <> ''
          AND b.patient_phone_key = sqlc.arg(patient_phone_key)::text AND b.patient_phone_key <> ''
          AND (b.status = 'confirmed' OR b.cancelled_online)
    ) b
    WHERE sqlc.arg(check_cooldown)::boolean
      AND t.id = @appointment_type_id AND t.cooldown_min > 0
      AND (b.status = 'confirmed'
           OR (b.cancelled_online AND b.cancelled_at > now() - make_interval(secs => sqlc.arg(cancel_keeps_sec)::int)))
      AND b.created_at > now() - make_interval(mins => t.cooldown_min)
), specialist_lock AS (
    -- BookingSpecialistLock, taken before the row is inserted: the insert
    -- reads its row from this.
    SELECT pg_advisory_xact_lock(hashtextextended('booking-specialist:' || sqlc.arg(specialist_id)::uuid::text, 0))
), target AS (
    SELECT at.clinic_id
    FROM appointment_types at
    JOIN appointment_type_specialists ats
      ON ats.appointment_type_id = at.id AND ats.specialist_id = @specialist_id
    JOIN specialists s
      ON s.id = ats.specialist_id AND s.clinic_id = at.clinic_id AND s.active
    WHERE at.id = @appointment_type_id AND at.clinic_id = @clinic_id
      AND sqlc.arg(slot_end)::timestamptz - sqlc.arg(slot_start)::timestamptz = make_interval(mins => at.duration_min)
      AND NOT EXISTS (SELECT 1 FROM cooling)
), booked AS (
    INSERT INTO bookings (
        id, clinic_id, appointment_type_id, specialist_id, slot_start, slot_end,
        patient_name, patient_email, patient_phone, patient_email_key, patient_phone_key,
        client_id, manage_token_hash, created_at, language, resource_id
    )
    SELECT @id, target.clinic_id, @appointment_type_id, @specialist_id, sqlc.arg(slot_start)::timestamptz, sqlc.arg(slot_end)::timestamptz,
           @patient_name, @patient_email, @patient_phone, sqlc.arg(patient_email_key)::text, sqlc.arg(patient_phone_key)::text,
           @client_id, @manage_token_hash, @created_at, @language, sqlc.narg(resource_id)::uuid
    FROM target CROSS JOIN specialist_lock
    ON CONFLICT (specialist_id, slot_start, clinic_id) WHERE status = 'confirmed' DO NOTHING
    RETURNING id, clinic_id
), audited AS (
    INSERT INTO audit_log (clinic_id, actor, action, entity, entity_id, after)
    SELECT clinic_id, @actor, 'booking.create', 'booking', id::text, @audit_after FROM booked
), remembered AS (
    INSERT INTO idempotency_keys (clinic_id, principal, route, key, request_hash, status_code, body)
    SELECT clinic_id, @principal, @route, @idempotency_key, @request_hash, @status_code, @body
    FROM booked WHERE sqlc.arg(remember)::boolean
)
SELECT count(*) FROM booked;

-- name: BookingWritten :exec
-- Fails the transaction unless the booking is there: the last statement
-- before the COMMIT of a booking written in one batch.
SELECT booking_written(sqlc.arg(id)::uuid);

-- name: VerificationStands :exec
-- Fails the transaction unless the clinic's verification mode is the one
-- an online booking was let through under (kept in memory).
SELECT verification_stands(sqlc.arg(clinic_id)::uuid, sqlc.arg(verification)::text);
