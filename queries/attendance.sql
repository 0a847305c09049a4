-- name: BookingCard :one
-- One booking of a clinic with its type's and specialist's names and the
-- clinic's zone, for the booking dialog and the attendance rules; the
-- room's name ('' when its type needs none).
SELECT sqlc.embed(b), t.name AS type_name, s.name AS specialist_name, c.timezone,
       coalesce(r.name, '')::text AS room_name
FROM bookings b
JOIN appointment_types t ON t.id = b.appointment_type_id
JOIN specialists s ON s.id = b.specialist_id
JOIN clinics c ON c.id = b.clinic_id
LEFT JOIN resources r ON r.clinic_id = b.clinic_id AND r.id = b.resource_id
WHERE b.id = @id AND b.clinic_id = @clinic_id;

-- name: BookingCardForUpdate :one
-- BookingCard's booking, locked until the transaction ends.
SELECT sqlc.embed(b), c.timezone
FROM bookings b
JOIN clinics c ON c.id = b.clinic_id
WHERE b.id = @id AND b.clinic_id = @clinic_id
FOR UPDATE OF b;

-- name: BookingAttendanceSet :one
-- Marks whether the patient came (an empty mark undoes it). A mark is a change
-- of the booking: its version moves on, so forms opened before it see it.
UPDATE bookings
SET attendance = @attendance,
    attendance_at = CASE WHEN @attendance::text = '' THEN NULL ELSE now() END,
    version = version + 1
WHERE id = @id
RETURNING *;

-- name: BookingNoShowCount :one
-- How often a patient did not come to the clinic's bookings: the same
-- e-mail (case aside), or the same phone digits when there are any.
SELECT count(*) FROM bookings b
WHERE b.clinic_id = @clinic_id AND b.attendance = 'no_show'
  AND ((sqlc.arg(email)::text <> '' AND lower(b.patient_email) = lower(sqlc.arg(email)::text))
       OR (regexp_replace(sqlc.arg(phone)::text, '\D', '', 'g') <> ''
           AND regexp_replace(b.patient_phone, '\D', '', 'g') = regexp_replace(sqlc.arg(phone)::text, '\D', '', 'g')));
