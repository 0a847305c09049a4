-- name: SeriesInsert :one
INSERT INTO series (id, clinic_id, appointment_type_id, specialist_id, every_days, planned, created_by)
VALUES (@id, @clinic_id, @appointment_type_id, @specialist_id, @every_days, @planned, @created_by)
RETURNING *;

-- name: SeriesBookingMark :one
-- A booking just written by the gate takes its place in its series.
UPDATE bookings SET series_id = @series_id, series_position = @series_position
WHERE id = @id AND clinic_id = @clinic_id
RETURNING *;

-- name: SeriesBookings :many
-- A series' bookings in their order, with what e-mails name of them. A
-- session that was moved is there once: as the booking it was moved to.
SELECT sqlc.embed(b), t.name AS type_name, t.translations AS type_translations, s.name AS specialist_name
FROM bookings b
JOIN appointment_types t ON t.id = b.appointment_type_id AND t.clinic_id = b.clinic_id
JOIN specialists s ON s.id = b.specialist_id AND s.clinic_id = b.clinic_id
WHERE b.series_id = @series_id AND b.clinic_id = @clinic_id AND b.status <> 'rescheduled'
ORDER BY b.series_position;

-- name: SeriesLaterForUpdate :many
-- The confirmed bookings of a series from a position on, locked in their
-- order for a cancel of them all.
SELECT id FROM bookings
WHERE series_id = @series_id AND clinic_id = @clinic_id AND series_position >= @from_position AND status = 'confirmed'
ORDER BY series_position
FOR UPDATE;

-- name: SeriesMarks :many
-- Each booking's place in its series and the series' length, for the
-- marks ("2/6") of a day's bookings: a moved session is one place.
SELECT b.id, b.series_position::int AS position,
       (SELECT count(DISTINCT o.series_position) FROM bookings o WHERE o.series_id = b.series_id AND o.clinic_id = b.clinic_id)::int AS total
FROM bookings b
WHERE b.clinic_id = @clinic_id AND b.id = ANY(@ids::uuid[]) AND b.series_id IS NOT NULL;

-- name: SeriesWaitlistEnd :many
-- Booking a series ends the patient's own places on the waitlist for its
-- type that are waiting (one under an offer keeps it: the offer's time is
-- theirs to take or to let go).
UPDATE waitlist_entries
SET state = 'booked', ended_at = @ended_at, booking_id = @booking_id
WHERE clinic_id = @clinic_id AND appointment_type_id = @appointment_type_id AND state = 'waiting'
  AND ((@email_key::text <> '' AND patient_email_key = @email_key::text)
    OR (@phone_key::text <> '' AND patient_phone_key = @phone_key::text))
RETURNING id;
