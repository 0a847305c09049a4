-- name: AccessRecordInsert :exec
-- One view's record. The e-mails a page shows are named by their ids and
-- stand for their bookings and waitlist places as well, looked up in the
-- same statement.
INSERT INTO access_records (clinic_id, staff_id, page, booking_ids, waitlist_ids, message_ids)
VALUES (
    sqlc.arg(clinic_id), sqlc.arg(staff_id), sqlc.arg(page),
    ARRAY(SELECT unnest(sqlc.arg(booking_ids)::uuid[])
          UNION SELECT m.booking_id FROM messages m
                WHERE m.id = ANY(sqlc.arg(message_ids)::uuid[]) AND m.clinic_id = sqlc.arg(clinic_id) AND m.booking_id IS NOT NULL
          UNION SELECT m.previous_id FROM messages m
                WHERE m.id = ANY(sqlc.arg(message_ids)::uuid[]) AND m.clinic_id = sqlc.arg(clinic_id) AND m.previous_id IS NOT NULL),
    ARRAY(SELECT unnest(sqlc.arg(waitlist_ids)::uuid[])
          UNION SELECT m.entry_id FROM messages m
                WHERE m.id = ANY(sqlc.arg(message_ids)::uuid[]) AND m.clinic_id = sqlc.arg(clinic_id) AND m.entry_id IS NOT NULL),
    sqlc.arg(message_ids)::uuid[]
);

-- name: AccessListByStaff :many
-- What one staff account looked at, newest first.
SELECT id, at, page,
       cardinality(booking_ids)::int AS bookings,
       cardinality(waitlist_ids)::int AS waitlist_places,
       cardinality(message_ids)::int AS messages
FROM access_records
WHERE clinic_id = sqlc.arg(clinic_id) AND staff_id = sqlc.arg(staff_id)
ORDER BY at DESC, id DESC
LIMIT sqlc.arg(row_limit);

-- name: AccessListByPatient :many
-- Who looked at any of these bookings or waitlist places, newest first,
-- with those of them each view showed.
SELECT r.id, r.at, r.page, r.staff_id, COALESCE(s.email, '')::text AS staff_email,
       ARRAY(SELECT unnest(r.booking_ids) INTERSECT SELECT unnest(sqlc.arg(booking_ids)::uuid[]))::uuid[] AS shown_bookings,
       ARRAY(SELECT unnest(r.waitlist_ids) INTERSECT SELECT unnest(sqlc.arg(waitlist_ids)::uuid[]))::uuid[] AS shown_waitlist
FROM access_records r
LEFT JOIN staff_users s ON s.id = r.staff_id
WHERE r.clinic_id = sqlc.arg(clinic_id)
  AND (r.booking_ids && sqlc.arg(booking_ids)::uuid[] OR r.waitlist_ids && sqlc.arg(waitlist_ids)::uuid[])
ORDER BY r.at DESC, r.id DESC
LIMIT sqlc.arg(row_limit);

-- name: AccessPatientWaitlist :many
-- The waitlist places of one patient at a clinic, by identity keys (an
-- empty key matches nothing).
SELECT id FROM waitlist_entries
WHERE clinic_id = sqlc.arg(clinic_id)
  AND ((sqlc.arg(email_key)::text <> '' AND patient_email_key = sqlc.arg(email_key)::text)
    OR (sqlc.arg(phone_key)::text <> '' AND patient_phone_key = sqlc.arg(phone_key)::text));

-- name: AccessDeleteBefore :execrows
-- Retention: a clinic's records older than its period for patient details.
DELETE FROM access_records
WHERE clinic_id = sqlc.arg(clinic_id) AND at < sqlc.arg(before);
