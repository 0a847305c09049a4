-- name: ChangeDeadlineHours :one
-- Until how many hours before its start a booking of the type may be
-- moved online: the type's own deadline, else its clinic's default.
SELECT COALESCE(t.change_deadline_hours, c.default_change_deadline_hours)::integer AS hours
FROM appointment_types t
JOIN clinics c ON c.id = t.clinic_id
WHERE t.id = @appointment_type_id;

-- name: BookingMarkLateCancel :one
-- A patient's cancel inside the change deadline, in the cancel's own
-- transaction.
UPDATE bookings SET late_cancel = true WHERE id = @id RETURNING *;

-- name: BookingLateCancelCount :one
-- How often a patient cancelled the clinic's bookings inside the change
-- deadline: matched as BookingNoShowCount matches.
SELECT count(*) FROM bookings b
WHERE b.clinic_id = @clinic_id AND b.late_cancel
  AND ((sqlc.arg(email)::text <> '' AND lower(b.patient_email) = lower(sqlc.arg(email)::text))
       OR (regexp_replace(sqlc.arg(phone)::text, '\D', '', 'g') <> ''
           AND regexp_replace(b.patient_phone, '\D', '', 'g') = regexp_replace(sqlc.arg(phone)::text, '\D', '', 'g')));
