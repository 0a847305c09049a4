-- Closures: runs of local dates on which one specialist or the whole
-- clinic takes no bookings (public holidays among them).

-- name: ClosureInsert :one
INSERT INTO closures (clinic_id, specialist_id, first_day, last_day, holiday, note)
VALUES (@clinic_id, sqlc.narg(specialist_id), @first_day, @last_day, @holiday, @note)
RETURNING id;

-- name: ClosureList :many
-- The clinic's closures that end on or after from_day, soonest first.
SELECT c.id, c.specialist_id, c.first_day, c.last_day, c.holiday, c.note,
       coalesce(s.name, '')::text AS specialist_name
FROM closures c
LEFT JOIN specialists s ON s.id = c.specialist_id AND s.clinic_id = c.clinic_id
WHERE c.clinic_id = @clinic_id AND c.last_day >= @from_day::date
ORDER BY c.first_day, c.specialist_id NULLS FIRST, c.id;

-- name: ClosureListByClinicRange :many
-- The clinic's closures over any date from from_day to to_day.
SELECT c.id, c.specialist_id, c.first_day, c.last_day, c.holiday, c.note
FROM closures c
WHERE c.clinic_id = @clinic_id AND c.first_day <= @to_day::date AND c.last_day >= @from_day::date
ORDER BY c.first_day, c.id;

-- name: ClosureGet :one
SELECT c.id, c.specialist_id, c.first_day, c.last_day, c.holiday, c.note,
       coalesce(s.name, '')::text AS specialist_name
FROM closures c
LEFT JOIN specialists s ON s.id = c.specialist_id AND s.clinic_id = c.clinic_id
WHERE c.id = @id AND c.clinic_id = @clinic_id;

-- name: ClosureDelete :execrows
DELETE FROM closures WHERE id = @id AND clinic_id = @clinic_id;

-- name: HolidayListByRange :many
SELECT id, first_day, note FROM closures
WHERE clinic_id = @clinic_id AND holiday AND first_day BETWEEN @from_day::date AND @to_day::date
ORDER BY first_day, id;

-- name: HolidayDeleteByRange :execrows
DELETE FROM closures
WHERE clinic_id = @clinic_id AND holiday AND first_day BETWEEN @from_day::date AND @to_day::date;

-- name: BookingListOnDays :many
-- The clinic's confirmed bookings that start on one of the local dates
-- days (of one specialist, or of all when specialist_id is null), for the
-- staff to move or cancel before a closure; from_time and to_time bound
-- the dates' instants for the index.
SELECT b.id, b.specialist_id, b.slot_start, b.slot_end, b.patient_name, b.patient_email, b.patient_phone,
       b.version, t.name AS type_name, s.name AS specialist_name
FROM bookings b
JOIN clinics k ON k.id = b.clinic_id
JOIN appointment_types t ON t.id = b.appointment_type_id
JOIN specialists s ON s.id = b.specialist_id
WHERE b.clinic_id = @clinic_id AND b.status = 'confirmed'
  AND (sqlc.narg(specialist_id)::uuid IS NULL OR b.specialist_id = sqlc.narg(specialist_id)::uuid)
  AND b.slot_start >= @from_time AND b.slot_start < @to_time
  AND (b.slot_start AT TIME ZONE k.timezone)::date = ANY(@days::date[])
ORDER BY b.slot_start, s.name;

-- name: ClosureCovers :one
-- Whether a closure of the specialist or of the clinic covers any part of
-- the range, its dates read in the clinic's zone.
SELECT EXISTS (
    SELECT 1 FROM closures c JOIN clinics k ON k.id = c.clinic_id
    WHERE c.clinic_id = @clinic_id AND (c.specialist_id IS NULL OR c.specialist_id = @specialist_id)
      AND (c.first_day::timestamp AT TIME ZONE k.timezone) < sqlc.arg(range_end)::timestamptz
      AND ((c.last_day + 1)::timestamp AT TIME ZONE k.timezone) > sqlc.arg(range_start)::timestamptz
);
